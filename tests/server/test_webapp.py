"""The built web app: compressed when the browser accepts it, hashed assets cached for a year,
index.html revalidated so that a new build is seen at once."""

from __future__ import annotations

import gzip

from server_harness import Serve, Server

SCRIPT = "console.log('graphbook');\n" * 200


def test_assets_are_sent_compressed_with_caching_headers(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        folder = server.settings.webapp
        (folder / "assets").mkdir(parents=True)
        (folder / "index.html").write_text('<script src="./assets/app-1a2b.js"></script>')
        (folder / "assets" / "app-1a2b.js").write_text(SCRIPT)
        (folder / "assets" / "app-1a2b.js.gz").write_bytes(gzip.compress(SCRIPT.encode()))

        async with server.http.get(
            f"{server.url}/assets/app-1a2b.js", headers={"Accept-Encoding": "gzip"}
        ) as response:
            assert response.status == 200
            assert response.headers["Content-Encoding"] == "gzip"
            assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
            assert response.headers["Content-Type"].startswith("text/javascript")
            assert int(response.headers["Content-Length"]) < len(SCRIPT) / 10
            assert await response.text() == SCRIPT

        async with server.http.get(
            f"{server.url}/assets/app-1a2b.js", headers={"Accept-Encoding": "identity"}
        ) as response:
            assert "Content-Encoding" not in response.headers
            assert await response.text() == SCRIPT

        async with server.http.get(f"{server.url}/") as response:
            assert response.headers["Cache-Control"] == "no-cache"
            assert "app-1a2b.js" in await response.text()

    serving(scenario)
