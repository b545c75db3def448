"""Local provider emulators for the adapter tests.

Each emulator is a real HTTP server on 127.0.0.1 (an ephemeral port) that
enforces its provider's thinking rules (signatures bound to the model and the
conversation prefix, tool pairing, the tool-loop leading-thinking rule) and
answers violations with the provider's own error JSON, so the tests can prove
both that thinkseal's requests are accepted and that a naive client's are not.
"""
