.PHONY: run test lint format bench

run:            ## install, migrate, load demo data, start web + worker
	bin/run-demo

test:           ## install and run the whole suite (SQLite, then PostgreSQL + Redis)
	bin/test

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

format:
	.venv/bin/ruff format .
	.venv/bin/ruff check --fix .

bench:
	.venv/bin/python bench/scoring.py
	.venv/bin/python bench/annotation_api.py
	.venv/bin/python bench/retrieval.py
	DJANGO_SETTINGS_MODULE=deploy.test_settings .venv/bin/python bench/media.py
	.venv/bin/python bench/grading.py
	.venv/bin/python bench/zip_bomb.py
	DJANGO_SETTINGS_MODULE=deploy.test_settings .venv/bin/python bench/body_limits.py
	.venv/bin/python bench/integrity.py
	.venv/bin/python bench/leaderboard.py
	.venv/bin/python bench/publish_preview.py
	.venv/bin/python bench/dashboard.py
