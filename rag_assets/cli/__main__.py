"""``python -m rag_assets.cli``: the same as the ``rag-assets`` command."""

import sys

from rag_assets.cli.commands import main

sys.exit(main())
