"""Vision: the balls and pins of every frame, named by colour and placed in table millimetres.

``Detector(profile, calibration, config=None).detect(image, frame, t_s) -> FrameDetections``; the
value types are in :mod:`vision.types` (the contract with tracking), the settings in
:class:`vision.config.DetectorConfig`.
"""

from vision.config import DetectorConfig
from vision.detect import Detector
from vision.types import UNCERTAIN, BallDetections, BallState, FrameDetections, PinDetections, PinState

__all__ = ["Detector", "DetectorConfig", "FrameDetections", "BallDetections", "PinDetections", "BallState",
           "PinState", "UNCERTAIN"]
