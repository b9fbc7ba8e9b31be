"""``python -m jaxtests._cli``: the ``jaxtests`` command."""

import sys

from jaxtests._cli import main

if __name__ == "__main__":
    sys.exit(main())
