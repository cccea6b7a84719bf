from rocmlint.cli import run

run()
