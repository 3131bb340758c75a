from cts.cli import main

raise SystemExit(main())
