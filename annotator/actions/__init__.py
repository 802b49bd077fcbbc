"""Every write operation of FrameLedger, one ``do_*`` function each.

Views, consumers, Celery tasks and management commands call these and do nothing
else of substance. Each function documents its preconditions and records itself in
the audit log (``annotator.models.audit_log.record``).
"""
