from studykb.editor.client import main

main()
