"""ASGI entry point: HTTP through Django, websockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from annotator.entry.routing import websocket_urlpatterns  # noqa: E402
from deploy.access_log import AccessLogMiddleware  # noqa: E402
from deploy.body_limits import BodyLimitMiddleware, DiskSpaceMiddleware  # noqa: E402
from deploy.upload_auth import UploadAuthMiddleware  # noqa: E402

# Outside in: the access log (bytes actually sent), then the body limits (a body over its
# path's limit is refused before Django, sessions, authentication or CSRF see it), then who
# the client is (a large body on an upload route needs a signed-in client), then room on the
# disks for an upload's declared length (507 otherwise), then Django.
application = AccessLogMiddleware(
    BodyLimitMiddleware(
        UploadAuthMiddleware(
            DiskSpaceMiddleware(
                ProtocolTypeRouter(
                    {
                        "http": django_asgi_app,
                        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
                    }
                )
            )
        )
    )
)
