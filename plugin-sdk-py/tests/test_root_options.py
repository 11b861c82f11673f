"""Root options (`[provides.cli_root_options]`, docs/protocol.md §4.5): what `@plugin.root_option` writes in
the manifest, and what reaches the option through `cli.root_option` and through agent-env itself."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
from jsonschema import Draft202012Validator
from sdk_helpers import HERE, REPO, require_agent_env_binary

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: the same parser, as a package (tests/requirements.txt)
    import tomli as tomllib

from agent_env_plugin import Plugin
from agent_env_plugin.contributions import root_flag

PLUGIN = HERE / "root_option_plugin.py"
MANIFEST_SCHEMA = json.loads((REPO / "protocol" / "schema" / "manifest.schema.json").read_text(encoding="utf-8"))


def printed_manifest(env: dict) -> str:
    done = subprocess.run(
        [sys.executable, str(PLUGIN), "--agent-env-manifest"], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_manifest_gives_each_root_option_its_value_and_always(plugin_env):
    text = printed_manifest(plugin_env)
    manifest = tomllib.loads(text)
    assert manifest["provides"]["cli_root_options"] == {
        "tenant": {"class": "TenantOption", "description": "Select a tenant's config", "value": "NAME"},
        "offline": {"class": "Offline", "description": "Work offline", "always": True},
        "r": {"class": "Region", "value": "REGION"},
    }
    assert 'tenant = { class = "TenantOption", description = "Select a tenant\'s config", value = "NAME" }' in text
    Draft202012Validator(MANIFEST_SCHEMA).validate(manifest)


def test_the_value_reaches_the_option_as_cli_root_option_sends_it(start, tmp_path):
    plugin = start([sys.executable, str(PLUGIN)], package="agentenv-roots", cwd=str(tmp_path))
    plugin.initialize()
    # A flag that takes a value gets it; a relative answer is made absolute against the plugin's folder.
    answer = plugin.request("cli.root_option", {"flag": "--tenant", "value": "acme"})
    assert answer == {"config_path": str(tmp_path / "tenants" / "acme.toml")}
    # The flag absent: the value is null.
    assert plugin.request("cli.root_option", {"flag": "--tenant", "value": None}) == {}
    # A switch is sent "true" when given.
    answer = plugin.request("cli.root_option", {"flag": "--offline", "value": "true"})
    assert answer == {"config_path": str(tmp_path / "offline" / "true.toml")}
    # A one-letter name is a short flag, and agent-env sends it as such.
    answer = plugin.request("cli.root_option", {"flag": "-r", "value": "eu"})
    assert answer == {"config_path": str(tmp_path / "regions" / "eu.toml")}
    assert plugin.shutdown() == 0


def test_agent_env_passes_the_flags_value_to_the_option(tmp_path, plugin_env):
    """End to end: with the printed manifest, `agent-env --tenant acme ...` takes `acme` as the flag's value
    (not as a command), calls the option with it, and reads the config file it answers."""
    binary = require_agent_env_binary()
    folder = tmp_path / "plugins" / "agentenv-roots"
    folder.mkdir(parents=True)
    (folder / "agent-env-plugin.toml").write_text(printed_manifest(plugin_env))
    (tmp_path / "tenants").mkdir()
    (tmp_path / "tenants" / "acme.toml").write_text("")
    env = dict(plugin_env, AGENT_ENV_PLUGIN_DIR=str(tmp_path / "plugins"), PATH="/usr/bin:/bin")

    def agent_env(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [binary, *args], env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=120
        )

    done = agent_env("--help")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "--tenant <NAME>" in done.stdout and "-r <REGION>" in done.stdout and "--offline" in done.stdout
    done = agent_env("--tenant", "acme", "config", "sources")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"file {tmp_path / 'tenants' / 'acme.toml'}" in done.stdout


def test_flag_that_repeats_the_names_flag_is_accepted_with_a_deprecation_warning():
    plugin = Plugin("agentenv-roots", "0.1.0")
    with pytest.warns(DeprecationWarning, match=r"flag= is deprecated and changes nothing; .*\(--tenant\)"):
        register = plugin.root_option("tenant", flag="--tenant", value="NAME")
    register(lambda value, host: None)
    with pytest.warns(DeprecationWarning, match=r"\(-t\)"):
        plugin.root_option("t", "-t")(lambda value, host: None)
    text = plugin.manifest(["roots"])
    assert 'tenant = { class = "tenant", value = "NAME" }' in text
    assert 't = "t"' in text


def test_flag_other_than_the_names_flag_is_refused():
    plugin = Plugin("agentenv-roots", "0.1.0")
    refused = r"this option is --tenant; agent-env never sends --org\b.*@root_option\('org'\)"
    with pytest.raises(ValueError, match=refused):
        plugin.root_option("tenant", flag="--org")


@pytest.mark.parametrize(
    "name, flag, advice",
    [
        ("x", "--y", "@root_option('--y') is --y"),  # `y` would be -y
        ("x", "--x", "@root_option('--x') is --x"),  # what they wrote, `x`, is -x
        ("tenant", "-o", "@root_option('o') is -o"),
        ("tenant", "--org", "@root_option('org') is --org"),
        ("tenant", "-xy", "@root_option('-xy') is -xy"),
    ],
)
def test_refused_flag_advice_names_a_registration_that_gives_that_flag(name, flag, advice):
    plugin = Plugin("agentenv-roots", "0.1.0")
    with pytest.raises(ValueError) as refused:
        plugin.root_option(name, flag=flag)
    assert advice in str(refused.value)
    # The advice holds: that registration makes the flag asked for.
    register = advice.split("'")[1]
    assert root_flag(register) == flag


def test_without_flag_there_is_no_warning():
    plugin = Plugin("agentenv-roots", "0.1.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plugin.root_option("tenant", value="NAME", always=True)(lambda value, host: None)


@pytest.mark.parametrize("value", ["", 5])
def test_value_must_name_the_flags_value(value):
    plugin = Plugin("agentenv-roots", "0.1.0")
    with pytest.raises(ValueError, match=r'give the name of the flag\'s value in --help \(value="NAME"\)'):
        plugin.root_option("tenant", value=value)  # type: ignore[arg-type]
