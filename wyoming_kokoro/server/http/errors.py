"""Errors in OpenAI's JSON shape, so OpenAI clients show the message as it is.

OpenAI answers `{"error": {"message", "type", "param", "code"}}`; its Python
client raises `BadRequestError`, `AuthenticationError`, … by the status code.
"""

from __future__ import annotations

import json
import logging

from aiohttp import web
from aiohttp.typedefs import Handler

from wyoming_kokoro.server.redact import for_client

_LOGGER = logging.getLogger(__name__)

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    422: "invalid_request_error",
    503: "server_error",
}


class ApiError(Exception):
    """An answer other than audio: status, message, and what it concerns."""

    def __init__(
        self,
        status: int,
        message: str,
        param: str | None = None,
        code: str | None = None,
        close: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.close = close  # hang up after the answer (e.g. a body still on its way)

    def body(self) -> bytes:
        error = {
            "message": for_client(self.message),  # the log has it whole
            "type": _TYPES.get(self.status, "server_error"),
            "param": self.param,
            "code": self.code,
        }
        return json.dumps({"error": error}).encode()

    def response(self) -> web.Response:
        headers = {"WWW-Authenticate": "Bearer"} if self.status == 401 else None
        response = web.Response(
            status=self.status, body=self.body(), content_type="application/json", headers=headers
        )
        if self.close:
            response.force_close()
        return response


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every refusal, ours or aiohttp's (404, 405, 413), in OpenAI's shape."""
    try:
        return await handler(request)
    except ApiError as err:
        _LOGGER.info("%s %s: %d %s", request.method, request.path, err.status, err.message)
        return err.response()
    except ConnectionError as err:
        # The client went away (e.g. in the middle of its body): nobody is left to
        # answer, and it is no failure of ours. aiohttp drops this answer quietly.
        _LOGGER.info("%s %s: the client went away (%s)", request.method, request.path, err)
        return web.Response(status=400)
    except web.HTTPRequestEntityTooLarge as err:
        return ApiError(
            413, f"request body too large: {err.text}", code="body_too_large"
        ).response()
    except web.HTTPException as err:
        if err.status < 400:
            raise
        message = f"{request.method} {request.path}: {err.reason}"
        return ApiError(err.status, message, code=err.reason.lower().replace(" ", "_")).response()
