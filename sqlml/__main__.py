from sqlml.cli import main

raise SystemExit(main())
