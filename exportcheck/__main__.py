import sys

from exportcheck import main

sys.exit(main())
