"""The container HEALTHCHECK: exit 0 when /readyz answers 200, 1 otherwise (no curl needed)."""

import os
import sys
import urllib.request

PORT = os.environ.get("EMBEDDING_SERVICE_PORT", "8000")

try:
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/readyz", timeout=2) as response:
        sys.exit(0 if response.status == 200 else 1)
except OSError as error:  # refused while loading, HTTPError for the 503 "not ready" answer
    print(f"not ready: {error}", file=sys.stderr)
    sys.exit(1)
