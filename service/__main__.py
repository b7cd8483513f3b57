"""`python -m service` is the `embedding-service` command."""

import sys

from service.cli.main import main

sys.exit(main())
