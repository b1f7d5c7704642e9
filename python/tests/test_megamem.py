"""The Python module against the CLI: the same dicts as `megamem <command> --json` (one
schema), configurations in every form the module takes, and ConfigError for what is refused."""
import json
import os
import subprocess

import pytest

import megamem

CLI = os.environ.get("MEGAMEM_CLI", "megamem")

TINY = ("--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
        "--max-position-embeddings 1024 --micro-batch-size 4 --global-batch-size 32 "
        "--vocab-size 50257 --bf16 --tensor-model-parallel-size 2 "
        "--use-distributed-optimizer")


def cli_json(*args, ok=(0,)):
    done = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, check=False)
    assert done.returncode in ok, done.stderr
    return json.loads(done.stdout)


def test_estimate_is_the_cli_json():
    got = megamem.estimate(TINY, world_size=8, gpu="h100")
    want = cli_json("estimate", "--megatron-args", TINY, "--world-size", "8", "--gpu", "h100")
    assert got == want
    assert got["verdict"]["status"] in megamem.CHECK_EXIT_STATUS


def test_preset_with_link_key_changes_and_a_link():
    got = megamem.estimate(preset="llama-3.1-8b", gpu="h100", gpus=8, set={"recompute": "full"})
    assert got == cli_json("estimate", "--preset", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                           "--set", "recompute=full")
    link = megamem.share_link(preset="llama-3.1-8b", gpu="h100", gpus=8, set={"tp": 2})
    assert link.startswith("http") and "tp=2" in link
    assert megamem.estimate(link) == cli_json("estimate", "--url", link)
    decoded = megamem.url_decode(link)
    assert decoded == cli_json("url", "decode", link)


def test_a_dict_of_config_fields_by_json_name():
    base = megamem.estimate(preset="llama-3.1-8b", gpu="h100", gpus=8)
    fields = {"parallel": {"tensor_model_parallel_size": 2}, "micro_batch_size": 2}
    got = megamem.estimate(fields, preset="llama-3.1-8b", gpu="h100", gpus=8)
    assert got["config"]["parallel"]["tensor_model_parallel_size"] == 2
    assert got["ranks"][0]["weight_bytes"] < base["ranks"][0]["weight_bytes"]
    with pytest.raises(megamem.ConfigError) as error:
        megamem.estimate({"no_such_field": 1}, preset="llama-3.1-8b")
    assert error.value.field == "no_such_field"


def test_check_verdict_and_nvidia_smi_text():
    fits = megamem.check(preset="llama-3.1-8b", gpu="h100", gpus=8, set={"recompute": "full"})
    assert fits["verdict"]["status"] == "fits" and "suggestion" not in fits
    tight = megamem.check(preset="llama-3.1-8b", gpus=8, set={"recompute": "full"},
                          nvidia_smi="NVIDIA A100-SXM4-40GB, 40960 MiB\n")
    assert tight["verdict"]["status"] == "does_not_fit"
    assert tight["suggestion"]["link"].startswith("http")


def test_plan_and_presets():
    result = megamem.plan(preset="llama-3.1-8b", gpu="h100", gpus=8, gbs=64, top=2)
    assert len(result["top"]) == 2
    assert result["top"][0]["peak_total_bytes"] > 0
    assert "deepseek-v3" in [m["id"] for m in megamem.presets()["models"]]


def test_compare_reads_a_log():
    with pytest.raises(megamem.ConfigError):
        megamem.compare("not a Megatron-LM training log\n")


def test_config_error_names_the_field_and_suggests():
    with pytest.raises(megamem.ConfigError) as error:
        megamem.estimate(TINY.replace("--tensor-model-parallel-size 2",
                                      "--tensor-model-parallel-size 3"), world_size=9)
    assert error.value.field == "num_attention_heads" or error.value.field.startswith("tensor")
    assert error.value.message
    assert isinstance(error.value.suggestions, list)
    with pytest.raises(megamem.ConfigError) as error:
        megamem.estimate("--num-layers 2", world_size=1)
    assert "hidden-size" in error.value.field or "hidden" in error.value.message


def test_share_link_keys_as_keywords_give_the_cli_number():
    # 61 layers do not split over PP 8 (transformer_block.py): refused as the CLI refuses it,
    # with the same nearest valid layouts; with the first of them, the CLI's number.
    with pytest.raises(megamem.ConfigError) as error:
        megamem.estimate(preset="deepseek-v3", gpu="h100-80gb", gpus=256, pp=8, ep=32)
    refused = cli_json("estimate", "--preset", "deepseek-v3", "--gpu", "h100-80gb", "--gpus",
                       "256", "--pp", "8", "--ep", "32", ok=(1,))
    assert error.value.field == refused["error"]["field"] == "num_layers"
    assert error.value.suggestions == refused["suggestions"]
    got = megamem.estimate(preset="deepseek-v3", gpu="h100-80gb", gpus=256, pp=8, ep=32,
                           pp_first=6, pp_last=7)
    want = cli_json("estimate", "--preset", "deepseek-v3", "--gpu", "h100-80gb", "--gpus", "256",
                    "--pp", "8", "--ep", "32", "--set", "pp-first=6&pp-last=7")
    assert got["ranks"][0]["peak_allocated_bytes"] == want["ranks"][0]["peak_allocated_bytes"]
    layers = megamem.estimate(preset="llama-3.1-8b", gpus=8, m_layers=16)
    assert layers["config"]["model"]["num_layers"] == 16
    with pytest.raises(megamem.ConfigError) as error:
        megamem.estimate(preset="llama-3.1-8b", tensor_parallel=2)
    assert error.value.field == "tensor_parallel"
