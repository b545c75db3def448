"""The JSON form of ``Step`` and ``Fault`` (what ``thinkseal emulate
--script`` and the control endpoint take), and the control endpoint being
off unless asked for."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest

from thinkseal.testing import EMULATOR_IDS, Fault, Step, emulate
from thinkseal.testing._control import read_script

from .test_emulators import post


@pytest.mark.parametrize(
    "step",
    [
        Step(),
        Step(thinking="Think.", text="Say."),
        Step(text="", calls=(("lookup", {"q": 1}), ("other", {}))),
    ],
)
def test_a_step_survives_its_json_form(step: Step) -> None:
    document = json.loads(json.dumps(step.to_json()))
    assert Step.from_json(document) == step


@pytest.mark.parametrize(
    "fault",
    [Fault.error(429, retry_after=1.5, times=2), Fault.error(500), Fault.slow(0.25), Fault.hang(), Fault.truncated()],
)
def test_a_fault_survives_its_json_form(fault: Fault) -> None:
    assert Fault.from_json(json.loads(json.dumps(fault.to_json()))) == fault


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "step: expected an object"),
        ({"thinking": "x", "texts": "y"}, "step.texts: unknown member (expected calls, text, thinking)"),
        ({"calls": {"name": "f"}}, "step.calls: expected an array of {name, arguments} objects"),
        ({"calls": [{"name": ""}]}, "step.calls[0].name: expected a non-empty string"),
        ({"calls": [{"name": "f", "args": {}}]}, "step.calls[0].args: unknown member (expected arguments, name)"),
    ],
)
def test_a_step_that_is_not_one_is_refused_naming_the_member(value: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        Step.from_json(value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"kind": "boom"}, "fault.kind: expected one of error, malformed, truncated, slow, hang"),
        ({"kind": "error", "status": 200}, r"fault.status: expected an HTTP error status \(400 to 599\)"),
        (
            {"kind": "error", "status": 429, "retry_after": -1},
            "fault.retry_after: expected a number of seconds, or null",
        ),
        ({"kind": "slow"}, "fault.seconds: expected a number of seconds"),
        ({"kind": "hang", "times": 0}, "fault.times: expected an integer of at least 1"),
        ({"kind": "malformed", "status": 500}, "fault.status: not a member of a 'malformed' fault"),
    ],
)
def test_a_fault_that_is_not_one_is_refused_naming_the_member(value: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message + "$"):
        Fault.from_json(value)


def test_a_script_document_is_steps_and_faults_or_an_array_of_steps() -> None:
    both = read_script({"steps": [{"text": "a"}], "faults": [{"kind": "hang"}]})
    assert both.steps == (Step(text="a"),)
    assert both.faults == (Fault.hang(),)
    assert read_script([{"text": "a"}]).steps == (Step(text="a"),)
    with pytest.raises(ValueError, match=r"^steps\[1\]: expected an object$"):
        read_script({"steps": [{}, 3]})


@pytest.mark.parametrize("provider_id", EMULATOR_IDS)
def test_the_control_path_is_no_providers_path(provider_id: str) -> None:
    script = json.dumps({"steps": [{"text": "Scripted."}]}).encode()
    with emulate(provider_id, require_auth=False) as emu:
        for method in ("GET", "POST"):
            request = urllib.request.Request(emu.server_url + "/_thinkseal/script", data=script, method=method)
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 404  # the provider's own answer to a path it does not serve
            json.loads(refused.value.read())
        assert len(emu.requests) == 2


def test_the_control_endpoint_is_off_unless_asked_for() -> None:
    script = json.dumps({"steps": [{"text": "Scripted."}]}).encode()
    with emulate("openai", require_auth=False, control=True) as emu:
        status, _, raw = post(emu.server_url + "/_thinkseal/script", script, {"content-type": "application/json"})
        assert status == 200, raw
        assert json.loads(raw) == {"steps": [{"text": "Scripted."}], "faults": 0}
        assert emu.requests == []
