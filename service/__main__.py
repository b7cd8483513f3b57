"""`python -m service` is the `embedding-service` command."""

import sys

from service.cli import main

sys.exit(main())
