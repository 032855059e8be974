"""The main job from a checkout: ``python train.py [OPTIONS]`` runs the command
:mod:`sichuan_agents.train` (installed: ``sichuan-train``; ``--help`` lists the options)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("sichuan_agents.train", run_name="__main__", alter_sys=True)
