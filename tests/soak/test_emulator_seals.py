"""A finding of the soak, in the emulators (``thinkseal.testing``), not the
library: the Responses emulator refused about one encrypted reasoning item in
eight that it issued itself, as "could not be verified".

It sealed ``payload + b"." + mac`` (a 32-byte HMAC) and opened the token with
``raw.rsplit(b".", 1)``: when the MAC held a ``.`` byte (0x2e; chance 1 -
(255/256)**32, about 12%), the split fell inside the MAC and the check failed.
The client recovered (one resend with the turn unsealed), so an agent loop went
on, but a valid seal was refused and the reasoning lost for that turn. The
emulator now splits by the MAC's length.
"""

from __future__ import annotations

import thinkseal
from thinkseal import Conversation, UserMessage
from thinkseal.testing import Step, emulate


def test_the_responses_emulator_accepts_every_seal_it_issued() -> None:
    refused = []
    with (
        emulate("openai-responses") as emu,
        thinkseal.Client("openai-responses", base_url=emu.base_url, api_key="test-key") as client,
    ):
        options = {**emu.options, **emu.thinking_options}
        for n in range(40):
            emu.script(Step(thinking=f"Thought {n}.", text=f"Answer {n}."))
            first = client.send(Conversation([UserMessage(f"Question {n}?")]), model="gpt-5", **options)
            assert first.message.has_sealed_thinking
            again = client.send(first.conversation.append(UserMessage("And then?")), model="gpt-5", **options)
            assert first.conversation.replay_report(thinkseal.Origin("openai-responses", "gpt-5"))[0].kept
            if again.recoveries:
                refused.append((n, again.recoveries[0].error))
    assert refused == []
