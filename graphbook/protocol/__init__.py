"""The wire protocol between the server and its clients: every websocket message in both
directions and every HTTP payload, as typed frozen dataclasses with one `encode` and one
`decode`. The messages about a run are the engine's events (graphbook.events), sent as they
are, and so are the previews they carry (graphbook/previews.py) and the request for a run
(graphbook/run_request.py's RunRequest, which every front end builds); this package adds the
rest, one module a concept: the run's snapshot (snapshot.py), the job queue (jobs.py), the
websocket's messages (messages.py), the HTTP bodies (bodies.py), apps (apps.py), and the one
encode and decode (codec.py). Every name is here, on the package (`p.RunStarted`).
`web/src/protocol.ts` is generated from both (by tests/web/protocol_ts.py); docs/protocol.md
documents them.

A message is a JSON object whose `type` names it. Fields are never renamed or removed within a
protocol `VERSION`; new optional fields may be added.
"""

from graphbook.events import BatchTiming as BatchTiming
from graphbook.events import ErrorInfo as ErrorInfo
from graphbook.events import NodeError as NodeError
from graphbook.events import NodeFinished as NodeFinished
from graphbook.events import NodeLog as NodeLog
from graphbook.events import NodeMetrics as NodeMetrics
from graphbook.events import NodeOutput as NodeOutput
from graphbook.events import NodePlan as NodePlan
from graphbook.events import NodeProgress as NodeProgress
from graphbook.events import NodeStarted as NodeStarted
from graphbook.events import NodeState as NodeState
from graphbook.events import PauseReason as PauseReason
from graphbook.events import PlanAction as PlanAction
from graphbook.events import PlanCause as PlanCause
from graphbook.events import PoolStats as PoolStats
from graphbook.events import Prompt as Prompt
from graphbook.events import PromptAnswered as PromptAnswered
from graphbook.events import RunFinished as RunFinished
from graphbook.events import RunMode as RunMode
from graphbook.events import RunPaused as RunPaused
from graphbook.events import RunResumed as RunResumed
from graphbook.events import RunStarted as RunStarted
from graphbook.events import RunStatus as RunStatus
from graphbook.previews import ImagePreview as ImagePreview
from graphbook.previews import Preview as Preview
from graphbook.previews import TensorPreview as TensorPreview
from graphbook.protocol.apps import AppFile as AppFile
from graphbook.protocol.apps import AppInfo as AppInfo
from graphbook.protocol.apps import AppList as AppList
from graphbook.protocol.apps import AppOutput as AppOutput
from graphbook.protocol.apps import AppResult as AppResult
from graphbook.protocol.apps import AppRun as AppRun
from graphbook.protocol.apps import AppRunList as AppRunList
from graphbook.protocol.apps import AppStage as AppStage
from graphbook.protocol.apps import AppSummary as AppSummary
from graphbook.protocol.apps import AppTablePage as AppTablePage
from graphbook.protocol.apps import BrowseEntry as BrowseEntry
from graphbook.protocol.apps import BrowseListing as BrowseListing
from graphbook.protocol.apps import Uploaded as Uploaded
from graphbook.protocol.bodies import CacheInfo as CacheInfo
from graphbook.protocol.bodies import Catalog as Catalog
from graphbook.protocol.bodies import ComponentDocument as ComponentDocument
from graphbook.protocol.bodies import ErrorBody as ErrorBody
from graphbook.protocol.bodies import ErrorReply as ErrorReply
from graphbook.protocol.bodies import GalleryPage as GalleryPage
from graphbook.protocol.bodies import GalleryRow as GalleryRow
from graphbook.protocol.bodies import GpuInfo as GpuInfo
from graphbook.protocol.bodies import LastRun as LastRun
from graphbook.protocol.bodies import MetricSeries as MetricSeries
from graphbook.protocol.bodies import MetricsList as MetricsList
from graphbook.protocol.bodies import NodeInfo as NodeInfo
from graphbook.protocol.bodies import OutputItem as OutputItem
from graphbook.protocol.bodies import ParamInfo as ParamInfo
from graphbook.protocol.bodies import RefusedFile as RefusedFile
from graphbook.protocol.bodies import RunAccepted as RunAccepted
from graphbook.protocol.bodies import RunDetails as RunDetails
from graphbook.protocol.bodies import RunList as RunList
from graphbook.protocol.bodies import RunMetrics as RunMetrics
from graphbook.protocol.bodies import RunRecordInfo as RunRecordInfo
from graphbook.protocol.bodies import SystemStats as SystemStats
from graphbook.protocol.bodies import TemplateCreated as TemplateCreated
from graphbook.protocol.bodies import TemplateInfo as TemplateInfo
from graphbook.protocol.bodies import TemplateList as TemplateList
from graphbook.protocol.bodies import WorkflowDocument as WorkflowDocument
from graphbook.protocol.bodies import WorkflowFile as WorkflowFile
from graphbook.protocol.bodies import WorkflowInputs as WorkflowInputs
from graphbook.protocol.bodies import WorkflowList as WorkflowList
from graphbook.protocol.codec import ErrorCode as ErrorCode
from graphbook.protocol.codec import ProtocolError as ProtocolError
from graphbook.protocol.codec import decode as decode
from graphbook.protocol.codec import encode as encode
from graphbook.protocol.codec import from_json as from_json
from graphbook.protocol.codec import to_json as to_json
from graphbook.protocol.jobs import JOB_ENDED as JOB_ENDED
from graphbook.protocol.jobs import Job as Job
from graphbook.protocol.jobs import JobList as JobList
from graphbook.protocol.jobs import Jobs as Jobs
from graphbook.protocol.jobs import JobState as JobState
from graphbook.protocol.jobs import JobWait as JobWait
from graphbook.protocol.messages import CLIENT_TYPES as CLIENT_TYPES
from graphbook.protocol.messages import MOVED_TO_HTTP as MOVED_TO_HTTP
from graphbook.protocol.messages import SERVER_TYPES as SERVER_TYPES
from graphbook.protocol.messages import VERSION as VERSION
from graphbook.protocol.messages import CacheCleared as CacheCleared
from graphbook.protocol.messages import CatalogChanged as CatalogChanged
from graphbook.protocol.messages import ClientMessage as ClientMessage
from graphbook.protocol.messages import Error as Error
from graphbook.protocol.messages import Hello as Hello
from graphbook.protocol.messages import Ping as Ping
from graphbook.protocol.messages import Pong as Pong
from graphbook.protocol.messages import ServerMessage as ServerMessage
from graphbook.protocol.messages import Snapshot as Snapshot
from graphbook.protocol.messages import WorkflowAction as WorkflowAction
from graphbook.protocol.messages import WorkflowChanged as WorkflowChanged
from graphbook.protocol.messages import WorkflowsChanged as WorkflowsChanged
from graphbook.protocol.messages import WorkflowsListed as WorkflowsListed
from graphbook.protocol.messages import decode_client as decode_client
from graphbook.protocol.messages import decode_server as decode_server
from graphbook.protocol.snapshot import ErrorEntry as ErrorEntry
from graphbook.protocol.snapshot import LogEntry as LogEntry
from graphbook.protocol.snapshot import NodeSnapshot as NodeSnapshot
from graphbook.protocol.snapshot import OutputPreview as OutputPreview
from graphbook.protocol.snapshot import RunSnapshot as RunSnapshot
from graphbook.run_request import RunRequest as RunRequest
