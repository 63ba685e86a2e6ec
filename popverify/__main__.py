from popverify.cli import main

raise SystemExit(main())
