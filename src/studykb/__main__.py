from studykb.cli import main

main()
