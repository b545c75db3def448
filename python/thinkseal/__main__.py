"""``python -m thinkseal``: the ``thinkseal`` command (``thinkseal.cli``).

With no command it runs ``thinkseal report``: the replay report of a stored
conversation (by default a bundled Claude tool loop with signed, redacted and
omitted thinking) for the model that produced it. Try ``--target
deepseek:deepseek-chat`` or ``--edit 1`` to see turns unseal.
"""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
