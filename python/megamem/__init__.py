"""megamem: per-GPU memory of Megatron-Core training, from Python.

Every function runs the megamem command of the same name in this process and returns the
dict that `megamem <command> ... --json` prints (the same schema; docs/agents.md and the
README describe it). A configuration is given as the CLI takes it:

    megamem.estimate("--num-layers 32 --hidden-size 4096 ...", world_size=64, gpu="h100")
    megamem.estimate(preset="llama-3-70b", gpu="h100", gpus=64, tp=8, pp=2)
    megamem.estimate({"num_layers": 32, "hidden_size": 4096, ...}, gpus=8)  # config fields
    megamem.check(url="http://localhost:8080/?v=1&model=qwen3-8b&gpus=16&tp=4")
    megamem.estimate(bridge_yaml=open("run_config.yaml").read(), world_size=64)

`config` may be Megatron-LM flags (a string), a share link (a string starting with http, ?
or v=) or a dict of configuration fields by their JSON names (`model.hidden_size` or just
`hidden_size`, as `megamem estimate --json` prints them under "config"). Errors raise
ConfigError with .field, .message and .suggestions (the nearest valid configurations, each a
dict with label, field and url).
"""

import json as _json
import os as _os
import tempfile as _tempfile

from . import _megamem

__all__ = ["ConfigError", "estimate", "check", "plan", "compare", "url_decode", "share_link",
           "presets", "CHECK_EXIT_STATUS"]

# check's verdicts as the CLI's exit status says them.
CHECK_EXIT_STATUS = {"fits": 0, "borderline": 2, "does_not_fit": 3}


class ConfigError(ValueError):
    """A configuration megamem (or Megatron-Core) refuses, naming the field and the rule."""

    def __init__(self, field, message, suggestions=None):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
        self.suggestions = list(suggestions or [])


def _fields_by_name():
    names = {}
    for name, group, json_key, link_key in _megamem.fields():
        if not link_key:
            continue
        names[name] = link_key
        if json_key:
            names[f"{group}.{json_key}"] = link_key
            names.setdefault(json_key, link_key)
    return names


_FIELDS = None


def _link_value(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _set_from_fields(fields):
    global _FIELDS
    if _FIELDS is None:
        _FIELDS = _fields_by_name()
    changes = []
    for key, value in fields.items():
        if isinstance(value, dict):  # a group of the config JSON: {"model": {...}}
            changes += _set_from_fields({f"{key}.{k}": v for k, v in value.items()})
            continue
        link_key = _FIELDS.get(key)
        if link_key is None:
            raise ConfigError(key, "is not a megamem configuration field (config JSON names, "
                                   "as `megamem estimate --json` prints under \"config\")")
        changes.append(f"{link_key}={_link_value(value)}")
    return changes


class _Args:
    """Command-line options for a call, with the temporary files text arguments need."""

    def __init__(self):
        self.args = []
        self.files = []

    def option(self, name, value):
        if value is not None:
            self.args += [name, _link_value(value) if not isinstance(value, str) else value]

    def text_file(self, name, text, suffix):
        if text is None:
            return
        handle = _tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False)
        with handle:
            handle.write(text)
        self.files.append(handle.name)
        self.args += [name, handle.name]

    def close(self):
        for path in self.files:
            try:
                _os.remove(path)
            except OSError:
                pass


def _link_changes_from_keywords(keywords):
    """Other keywords are share-link keys (tp=8, pp=4, recompute="full", m_layers=61 for
    m.layers): the CLI's --tp/--pp/... and --set in one."""
    global _FIELDS
    if _FIELDS is None:
        _FIELDS = _fields_by_name()
    link_keys = set(_FIELDS.values())
    changes = {}
    for name, value in keywords.items():
        for key in (name, name.replace("_", "-"), name.replace("_", ".", 1)):
            if key in link_keys:
                changes[key] = value
                break
        else:
            raise ConfigError(name, "is neither an option of this function nor a share-link key "
                                    "(docs/share-links.md)")
    return changes


def _configuration(args, config, *, megatron_args=None, world_size=None, url=None, preset=None,
                   recipe=None, gpu=None, gpus=None, bridge_yaml=None, hf_config=None,
                   vocab_size=None, set=None, **keywords):  # noqa: A002 - the CLI's option name
    if keywords:
        set = {**_link_changes_from_keywords(keywords), **(set or {})}
    if isinstance(config, dict):
        set = {**_to_link_changes(config), **(set or {})}
    elif isinstance(config, str):
        if config.startswith(("http://", "https://", "?", "v=")):
            url = config
        else:
            megatron_args = config
    elif config is not None:
        raise ConfigError("config", "expects Megatron-LM flags, a share link or a dict of fields")
    args.option("--megatron-args", megatron_args)
    args.option("--world-size", world_size)
    args.option("--url", url)
    args.option("--preset", preset)
    args.option("--recipe", recipe)
    args.option("--gpu", gpu)
    args.option("--gpus", gpus)
    args.option("--vocab-size", vocab_size)
    args.text_file("--bridge-config", bridge_yaml, ".yaml")
    args.text_file("--hf-config", hf_config, ".json")
    if set:
        args.option("--set", "&".join(f"{k}={_link_value(v)}" for k, v in set.items()))


def _to_link_changes(fields):
    return dict(change.split("=", 1) for change in _set_from_fields(fields))


def _raise_from(code, out, err):
    document = None
    try:
        document = _json.loads(out) if out.strip() else None
    except ValueError:
        pass
    if isinstance(document, dict) and "error" in document:
        error = document["error"]
        raise ConfigError(error.get("field", ""), error.get("message", ""),
                          document.get("suggestions", []))
    for line in err.splitlines():
        if line.startswith("megamem: error: "):
            field, _, message = line[len("megamem: error: "):].partition(": ")
            raise ConfigError(field, message)
    raise ConfigError("", err.strip() or f"megamem exited with {code}")


def _run(command, args, ok_codes=(0,)):
    code, out, err = _megamem.run(command, args)
    if code not in ok_codes:
        _raise_from(code, out, err)
    return _json.loads(out)


def _call(command, extra, config, kwargs, ok_codes=(0,), prefix=()):
    args = _Args()
    try:
        _configuration(args, config, **kwargs)
        return _run(command, [*prefix, *args.args, *extra, "--json"], ok_codes)
    finally:
        args.close()


def estimate(config=None, *, timeline=False, **kwargs):
    """The estimate: per-rank memory, the verdict, what-if rows and the share link."""
    return _call("estimate", ["--timeline"] if timeline else [], config, kwargs)


def check(config=None, *, nvidia_smi=None, **kwargs):
    """The pre-flight: {"verdict", "link", "suggestion"}; nvidia_smi is the text of
    `nvidia-smi --query-gpu=name,memory.total --format=csv`."""
    args = _Args()
    try:
        args.text_file("--gpu-from-nvidia-smi", nvidia_smi, ".csv")
        return _call("check", args.args, config, kwargs, ok_codes=(0, 2, 3))
    finally:
        args.close()


def plan(config=None, *, gbs=None, top=None, **kwargs):
    """The fastest layouts that fit: {"top", "pareto", "rejections", "stats", ...}."""
    extra = []
    if gbs is not None:
        extra += ["--gbs", str(gbs)]
    if top is not None:
        extra += ["--top", str(top)]
    return _call("plan", extra, config, kwargs)


def compare(log_text, *, vocab_size=None, gpu=None):
    """A Megatron-LM training log's measured memory beside the estimate of its configuration."""
    args = _Args()
    try:
        args.text_file("--log", log_text, ".log")
        command = [args.args[1]]
        if vocab_size is not None:
            command += ["--vocab-size", str(vocab_size)]
        if gpu is not None:
            command += ["--gpu", gpu]
        return _run("compare", command + ["--json"])
    finally:
        args.close()


def url_decode(link):
    """A share link as its settings, config JSON and Megatron-LM flags."""
    return _run("url", ["decode", link, "--json"])


def share_link(config=None, **kwargs):
    """The configuration as a share link (a string)."""
    return _call("url", [], config, kwargs, prefix=("encode",))["link"]


def presets():
    """The model, GPU and recipe presets."""
    return _run("presets", ["--json"])
