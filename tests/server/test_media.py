"""Images nodes produce, and image files under the roots, served to the browser."""

from __future__ import annotations

from PIL import Image
from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.workflow import Workflow


def test_images_in_outputs_become_urls(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        media = server.settings.media[0]
        media.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (4, 4), "blue").save(media / "blue.png")
        wf = Workflow()
        wf.add("Picture", id="pic", path=str(media / "blue.png"))
        server.save("pic.json", wf.to_json())
        socket = await server.connect()
        await server.run_to_end(socket, "pic.json")
        preview = socket.of(p.NodeOutput)[0].preview
        assert isinstance(preview, dict)
        made, file = preview["image"], preview["file"]
        assert isinstance(made, p.ImagePreview) and isinstance(file, p.ImagePreview)
        assert (made.size, made.mode) == ([8, 6], "RGB")
        assert (file.url, file.value) == ("/api/media/file/media/blue.png", str(media / "blue.png"))
        for url in (made.url, file.url, made.url):  # the image a node made: encoded once, kept
            assert url is not None
            async with server.http.get(server.url + url) as response:
                assert response.status == 200 and response.content_type == "image/png"
                assert (await response.read()).startswith(b"\x89PNG")
        status, gone = await server.get("/api/media/mem/0123456789abcdef")
        assert status == 404 and "latest outputs only" in gone["error"]["message"]

    serving(scenario)


def test_system_stats_and_settings(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        status, body = await server.get("/api/system")
        stats = p.from_json(p.SystemStats, body)
        assert stats.memory_total > 0 and stats.cache.budget_bytes == server.settings.cache_budget
        status, settings = await server.request(
            "PUT", "/api/settings", json={"cache_budget_bytes": 1024}
        )
        assert status == 200 and settings["cache_budget_bytes"] == 1024
        status, _ = await server.request("PUT", "/api/settings", json={"cache_budget_bytes": -1})
        assert status == 400
        status, page = await server.get("/")
        assert status == 200 and "npm run build" in page

    serving(scenario)
