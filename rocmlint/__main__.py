from rocmlint.cli import main

raise SystemExit(main())
