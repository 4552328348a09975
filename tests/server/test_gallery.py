"""The results gallery's route: a node's output dicts filtered, sorted and paged on the server,
with thumbnails of images wherever they lie and full images only from the roots."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from PIL import Image
from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.workflow import Workflow

NODES = Path(__file__).resolve().parents[1] / "fixtures" / "gallery_nodes.py"
N = 1200
LABELS = ("cat", "dog", "bird")


def confidence(i: int) -> float:
    return (i * 37 % 100) / 100


async def page(server: Server, **query: Any) -> tuple[int, Any]:
    params = {"workflow": "shots.json", "node": "shots", **{k: str(v) for k, v in query.items()}}
    return await server.get(f"/api/outputs/gallery?{urlencode(params)}")


def test_gallery_pages_filters_sorts_and_thumbnails(serving: Serve, tmp_path: Path) -> None:
    (tmp_path / "nodes").mkdir()
    shutil.copyfile(NODES, tmp_path / "nodes" / "gallery_nodes.py")
    elsewhere = tmp_path / "elsewhere"  # under none of the server's roots

    async def scenario(server: Server) -> None:
        wf = Workflow()
        wf.add("Shots", id="shots", n=N, folder=str(elsewhere), drawn=2)
        server.save("shots.json", wf.to_json())
        socket = await server.connect()
        await server.run_to_end(socket, "shots.json")
        await filters_and_sorts(server)
        await refuses_bad_queries(server)
        await images_outside_the_roots(server, socket)

    serving(scenario)


async def filters_and_sorts(server: Server) -> None:
    status, body = await page(server, limit=50)
    assert status == 200, body
    first = p.from_json(p.GalleryPage, body)
    assert (first.total, first.matched) == (N, N)
    assert [r.index for r in first.rows] == list(range(50))
    assert first.rows[7].fields == {
        "prediction": "dog",
        "confidence": confidence(7),
        "name": "shot 7",
    }
    assert first.numeric == ["confidence"] and "prediction" in first.fields

    status, body = await page(server, filter='prediction == "cat"', offset=100, limit=20)
    assert status == 200, body
    cats = p.from_json(p.GalleryPage, body)
    assert cats.matched == N // 3
    assert [r.index for r in cats.rows] == [i for i in range(N) if i % 3 == 0][100:120]

    query = "confidence < 0.5 and prediction != dog"
    status, body = await page(server, filter=query, sort="confidence", order="desc", offset=100)
    kept = [i for i in range(N) if confidence(i) < 0.5 and LABELS[i % 3] != "dog"]
    wanted = sorted(kept, key=lambda i: -confidence(i))  # ties keep the order handed on
    low = p.from_json(p.GalleryPage, body)
    assert low.matched == len(kept) == 400 and low.offset == 100
    assert [r.index for r in low.rows] == wanted[100:200]
    values = [r.fields["confidence"] for r in low.rows]
    assert values == sorted(values, reverse=True) and max(values) < 0.5

    status, body = await page(server, filter="name contains 'SHOT 11'", limit=500)
    named = p.from_json(p.GalleryPage, body)
    elevens = [i for i in range(N) if f"shot {i}".startswith("shot 11")]
    assert [r.index for r in named.rows] == elevens


async def refuses_bad_queries(server: Server) -> None:
    for query, named in (
        ("confidence ~ 0.5", "'~'"),
        ("confidence <", "incomplete clause"),
        ("prediction == cat or confidence > 1", "'or'"),
        ("__import__('os') == 1", "not a field name"),
    ):
        status, body = await page(server, filter=query)
        assert status == 400, (query, body)
        assert named in body["error"]["message"], (query, body)
    status, body = await page(server, limit=0)
    assert status == 400 and "limit" in body["error"]["message"]
    status, body = await server.get(
        "/api/outputs/gallery?" + urlencode({"workflow": "shots.json", "node": "nope"})
    )
    assert status == 404 and "run it first" in body["error"]["message"]


async def images_outside_the_roots(server: Server, socket: Any) -> None:
    status, body = await page(server, limit=3)
    assert status == 200, body
    rows = p.from_json(p.GalleryPage, body).rows
    shown = rows[0]
    assert shown.url is not None and shown.reason is None
    assert shown.thumb is not None and shown.path is not None
    async with server.http.get(server.url + shown.url) as response:  # the image whole
        assert response.status == 200
        assert await response.read() == Path(shown.path).read_bytes()
    thumb_for_full = shown.url.split("sig=")[0] + "sig=" + shown.thumb.split("sig=")[1]
    async with server.http.get(server.url + thumb_for_full) as response:
        assert response.status == 403, "a thumbnail's signature does not open the file whole"
    async with server.http.get(server.url + shown.thumb) as response:
        assert response.status == 200 and response.content_type == "image/jpeg"
        thumb = Image.open(io.BytesIO(await response.read()))
        assert max(thumb.size) == 160 and thumb.size == (160, 120)
    made = list((server.settings.data / "thumbnails").glob("*.jpg"))
    assert len(made) == 1

    for url in (shown.thumb, shown.url):
        forged = url.replace(shown.path.replace("/", "%2F"), "%2Fetc%2Fpasswd")
        assert forged != url
        async with server.http.get(server.url + forged) as response:
            assert response.status == 403

    live = [m for m in socket.of(p.NodeOutput) if m.node_id == "shots"]
    image = live[0].preview["image"]
    assert isinstance(image, p.ImagePreview)
    assert (image.url or "").startswith("/api/media/image?") and image.outside is None
    assert (image.thumb or "").startswith("/api/media/thumb?")


def test_gallery_of_outputs_kept_in_the_server_on_ray(
    serving: Serve, tmp_path: Path, ray_address: str
) -> None:
    (tmp_path / "nodes").mkdir()
    shutil.copyfile(NODES, tmp_path / "nodes" / "gallery_nodes.py")
    media = tmp_path / "media" / "shots"  # under the server's --media root

    async def scenario(server: Server) -> None:
        wf = Workflow()
        wf.add("Shots", id="shots", n=300, folder=str(media), drawn=1)
        server.save("shots.json", wf.to_json())
        socket = await server.connect()
        run_id = await server.run("shots.json")
        await socket.until(p.RunFinished, lambda m: m.run_id == run_id, timeout=180)
        await server.idle()
        status, body = await page(server, filter="confidence >= 0.9", sort="confidence")
        assert status == 200, body
        shown = p.from_json(p.GalleryPage, body)
        kept = sorted((i for i in range(300) if confidence(i) >= 0.9), key=confidence)
        assert (shown.total, shown.matched) == (300, len(kept))
        assert [r.index for r in shown.rows] == kept
        status, body = await page(server, limit=1)
        row = p.from_json(p.GalleryPage, body).rows[0]
        assert row.url == "/api/media/file/media/shots/shot00000.png" and row.reason is None

    serving(scenario, workers=1, ray=ray_address)
