"""benchmarks/rllib.py: ``--channels`` reaches the module's model_config (runners and
learner), a bad value is one line and exit 2. Skipped without Ray RLlib."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib")

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_rllib", ROOT / "benchmarks/rllib.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _model_config(config):
    from sichuan_agents.training.rllib_train import MODULE_ID

    return config.rl_module_spec.rl_module_specs[MODULE_ID].model_config


def test_channels_go_into_the_module_config():
    bench = _bench()
    args = bench.parse_args(["--sample-only", "--channels", "32", "--precision", "bf16"])
    cfg = _model_config(bench.algo_config(1, args))
    assert cfg["channels"] == 32 and cfg["precision"] == "bf16"
    appo = _model_config(bench.algo_config(1, bench.parse_args(["--channels", "16"]), "appo"))
    assert appo["channels"] == 16
    default = _model_config(bench.algo_config(1, bench.parse_args([])))
    assert default["channels"] == 64


def test_bad_channels_is_one_line_and_exit_2(capsys):
    bench = _bench()
    with pytest.raises(SystemExit) as e:
        bench.parse_args(["--channels", "0"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--channels must be at least 1" in err and "Traceback" not in err


def test_epochs_follow_train_py_and_reach_the_algorithm():
    """Without --epochs the benchmark trains with train.py's default passes; a given value
    reaches RLlib's PPO config; 0 is one line and exit 2."""
    from sichuan_agents import train

    bench = _bench()
    assert bench.parse_args([]).epochs == train.DEFAULT_EPOCHS == train.parse_args([]).epochs
    assert bench.algo_config(1, bench.parse_args(["--epochs", "3"])).num_epochs == 3
    with pytest.raises(SystemExit) as e:
        bench.parse_args(["--epochs", "0"])
    assert e.value.code == 2
