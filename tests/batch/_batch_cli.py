"""``python -m tests.batch._batch_cli ARGS``: ``cueref batch ARGS`` with the stand-in stages, each frame
``$CUEREF_TEST_FRAME_DELAY_S`` slower: the subprocess the kill test kills."""

import sys

from tests.batch._standins import batch, slow_truth_stages

if __name__ == "__main__":
    sys.exit(batch(sys.argv[1:], stages=slow_truth_stages))
