.PHONY: run test quick lint format bench bench-sandbox bench-load bench-large-upload bench-multihost

run:            ## install, migrate, load demo data, start web + worker
	bin/run-demo

test:           ## install and run the whole suite (SQLite, then PostgreSQL + Redis)
	bin/test

quick:          ## the inner loop: the checks and the fast subset on SQLite (bin/test --quick)
	bin/test --quick

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	bin/setup-js
	node_modules/.bin/eslint frontend/static/frontend/js

format:
	.venv/bin/ruff format .
	.venv/bin/ruff check --fix .

bench:          ## every bench that runs here unattended (PostgreSQL at 127.0.0.1 for two, Chromium for four)
	.venv/bin/python bench/scoring.py
	.venv/bin/python bench/annotation_api.py
	.venv/bin/python bench/save_cost.py
	.venv/bin/python bench/retrieval.py
	.venv/bin/python bench/retrieval.py --app-only
	DJANGO_SETTINGS_MODULE=deploy.test_settings .venv/bin/python bench/media.py
	.venv/bin/python bench/grading.py
	.venv/bin/python bench/zip_bomb.py
	.venv/bin/python bench/archive_bombs.py
	DJANGO_SETTINGS_MODULE=deploy.test_settings .venv/bin/python bench/body_limits.py
	.venv/bin/python bench/integrity.py
	.venv/bin/python bench/leaderboard.py
	.venv/bin/python bench/publish_preview.py
	.venv/bin/python bench/dashboard.py
	.venv/bin/python bench/keyboard.py
	.venv/bin/python bench/adjudication_keys.py
	.venv/bin/python bench/ui_scale.py

# Not in `make bench`: each needs root, a long run or a setup of its own.
# The bundle sandbox refuses to run unless root (bwrap, a uid of the job's own, cgroups).
bench-sandbox:
	.venv/bin/python bench/bundle_sandbox.py

# One Daphne against the production topology under locust: PostgreSQL + Redis, nginx,
# up to 12 minutes a run; flock keeps two load runs off the same CPUs.
bench-load:
	flock /tmp/bench.lock .venv/bin/python bench/load.py compare --annotators 50 --seconds 60

# A 10-minute generated source uploaded both ways and ingested, then 1,000 raw and 150
# Chromium seeks, on the embedded default and then on bin/run-stack (root, PostgreSQL, Redis):
# a long run. Issue 27's figures: --minutes 120 --browser-seeks 1000 (docs/media.md 8.4).
bench-large-upload:
	.venv/bin/python bench/large_upload.py --minutes 10 --browser-seeks 150 --target both

# The multi-host drill: root, `ip` and network namespaces, up to 25 minutes (bin/run-multihost).
bench-multihost:
	bin/run-multihost
