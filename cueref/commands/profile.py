"""``cueref profile``: list the built-in table profiles, show one, or check a profile file."""

from __future__ import annotations

import argparse

from calibration.table import builtin_profiles, resolve_profile


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("list", "show", "check"), help="list the built-ins; show or check one")
    p.add_argument("profile", nargs="?", help="a built-in name, a .yaml file, or a spec like 1420x810,ball=52")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        for name, path in builtin_profiles().items():
            prof = resolve_profile(name)
            print(f"{name:18s} {prof.kind:14s} {prof.length_mm:g} x {prof.width_mm:g} mm, balls {prof.ball_diameter_mm:g} mm  ({path})")
        return 0
    if not args.profile:
        raise ValueError(f"'cueref profile {args.action}' needs a profile name, file or spec")
    prof = resolve_profile(args.profile)
    if args.action == "check":
        print(f"{prof.source}: valid {prof.kind} profile {prof.name!r}, {prof.length_mm:g} x {prof.width_mm:g} mm")
        return 0
    print(f"profile {prof.name} ({prof.kind}) from {prof.source}")
    print(f"  playing surface {prof.length_mm:g} x {prof.width_mm:g} mm; ball {prof.ball_diameter_mm:g} mm; cushion nose {prof.cushion_nose_height_mm:g} mm")
    print(f"  balls: {', '.join(f'{b.id} ({b.colour}, {b.group})' for b in prof.balls)}")
    for pk in prof.pockets:
        print(f"  pocket {pk.id}: {pk.kind}, mouth {pk.mouth_mm:g} mm, drop centre ({pk.xy_mm[0]:.1f}, {pk.xy_mm[1]:.1f})")
    for h in prof.holes:
        print(f"  hole {h.id}: {h.value} points at ({h.xy_mm[0]:g}, {h.xy_mm[1]:g}), diameter {2 * h.radius_mm:g} mm")
    for pin in prof.pins:
        print(f"  pin {pin.id} ({pin.colour}) at ({pin.xy_mm[0]:g}, {pin.xy_mm[1]:g}) guards {pin.guards}: knocking it down costs the {pin.penalty.replace('_', ' ')}")
    for name, xy in prof.spots.items():
        print(f"  spot {name}: ({xy[0]:g}, {xy[1]:g})")
    if prof.baulk_x_mm is not None:
        print(f"  baulk line x = {prof.baulk_x_mm:g} mm; D radius {prof.d_radius_mm:g} mm")
    return 0
