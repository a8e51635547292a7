from __future__ import annotations

from browserdeck.cli import main

raise SystemExit(main())
