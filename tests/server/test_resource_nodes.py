"""A resource shows in the browser as a node that was built: started, then done."""

from __future__ import annotations

from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.workflow import Workflow


def split_by_function() -> dict[str, object]:
    wf = Workflow()
    fn = wf.add("Function", id="fn", val="lambda d: d['x'] % 2 == 0")
    split = wf.add("Split", id="split", split_fn=fn)
    wf.connect(wf.add("Numbers", id="src", n=40, delay=0.05), split)
    return wf.to_json()


def test_a_built_resource_is_done_while_the_run_goes_on(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("split.json", split_by_function())
        socket = await server.connect()
        run_id = await server.run("split.json")
        await socket.until(p.NodeStarted, lambda m: m.node_id == "fn")
        finished = await socket.until(p.NodeFinished, lambda m: m.node_id == "fn")
        assert (finished.run_id, finished.status, finished.counts) == (run_id, "done", {})
        await socket.until(p.NodeProgress, lambda m: m.node_id == "split")

        late = await server.connect()
        snapshot = late.of(p.Snapshot)[0]
        assert snapshot.run is not None and snapshot.run.status == "running"
        states = {n.node_id: n.state for n in snapshot.run.nodes}
        assert states["fn"] == "done" and states["split"] == "running"
        await socket.until(p.RunFinished)
        await server.idle()

    serving(scenario)
