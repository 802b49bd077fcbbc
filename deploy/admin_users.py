"""Django's user admin under the rules of the people pages (``docs/workflow.md``, "Separation
of duties"): a superuser blind on a packet may look but not add, change or delete accounts
there either, and a password set in the admin is recorded as the people pages record theirs
(``set_password``, with its actor), so ``annotator.reads.separation`` knows who may hold it."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from annotator.models.audit_log import record
from annotator.reads import access


class SeparatedUserAdmin(UserAdmin):
    def _may_administer(self, request) -> bool:
        return access.administration_refusal(request.user) is None

    def has_add_permission(self, request):
        return self._may_administer(request) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        return self._may_administer(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._may_administer(request) and super().has_delete_permission(request, obj)

    def log_change(self, request, obj, message):
        entry = super().log_change(request, obj, message)
        if "password" in str(message) and obj.pk != request.user.pk:
            record(request.user, "set_password", obj, details={"username": obj.username, "via": "admin"})
        return entry


def install() -> None:
    User = get_user_model()
    if admin.site.is_registered(User):
        admin.site.unregister(User)
    admin.site.register(User, SeparatedUserAdmin)
