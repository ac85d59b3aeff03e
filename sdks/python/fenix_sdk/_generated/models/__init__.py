"""Contains all the data models used in inputs/outputs"""

from .access import Access
from .app import App
from .attempt import Attempt
from .attempt_error_type_1 import AttemptErrorType1
from .attempt_error_type_2_type_1 import AttemptErrorType2Type1
from .attempt_error_type_3_type_1 import AttemptErrorType3Type1
from .attempt_with_delivery import AttemptWithDelivery
from .cancelled_event import CancelledEvent
from .create_app import CreateApp
from .create_endpoint import CreateEndpoint
from .create_endpoint_headers_type_0 import CreateEndpointHeadersType0
from .create_endpoint_signature_scheme import CreateEndpointSignatureScheme
from .create_event_type import CreateEventType
from .create_event_type_example_type_0 import CreateEventTypeExampleType0
from .create_event_type_schema_type_0 import CreateEventTypeSchemaType0
from .create_portal_session import CreatePortalSession
from .create_token import CreateToken
from .created_token import CreatedToken
from .delivery import Delivery
from .delivery_status import DeliveryStatus
from .endpoint import Endpoint
from .endpoint_auth import EndpointAuth
from .endpoint_auth_request import EndpointAuthRequest
from .endpoint_auth_type import EndpointAuthType
from .endpoint_headers import EndpointHeaders
from .endpoint_replay import EndpointReplay
from .endpoint_replay_request import EndpointReplayRequest
from .endpoint_signature_scheme import EndpointSignatureScheme
from .endpoint_state import EndpointState
from .endpoint_stats import EndpointStats
from .endpoint_tls import EndpointTls
from .endpoint_tls_in import EndpointTlsIn
from .error_body import ErrorBody
from .error_code import ErrorCode
from .error_detail import ErrorDetail
from .event import Event
from .event_batch import EventBatch
from .event_batch_item import EventBatchItem
from .event_batch_result import EventBatchResult
from .event_data_type_0 import EventDataType0
from .event_type import EventType
from .event_type_example_type_0 import EventTypeExampleType0
from .event_type_schema_type_0 import EventTypeSchemaType0
from .filter_test import FilterTest
from .filter_test_event import FilterTestEvent
from .filter_test_event_data_type_0 import FilterTestEventDataType0
from .filter_test_result import FilterTestResult
from .filter_verdict import FilterVerdict
from .health import Health
from .health_status import HealthStatus
from .jwk import Jwk
from .key_set import KeySet
from .list_deliveries_status import ListDeliveriesStatus
from .new_event import NewEvent
from .new_event_data import NewEventData
from .no_options import NoOptions
from .on_dead_letter import OnDeadLetter
from .operator_task_filter import OperatorTaskFilter
from .operator_task_request import OperatorTaskRequest
from .page_app import PageApp
from .page_app_data_item import PageAppDataItem
from .page_attempt import PageAttempt
from .page_attempt_data_item import PageAttemptDataItem
from .page_attempt_data_item_error_type_1 import PageAttemptDataItemErrorType1
from .page_attempt_data_item_error_type_2_type_1 import (
    PageAttemptDataItemErrorType2Type1,
)
from .page_attempt_data_item_error_type_3_type_1 import (
    PageAttemptDataItemErrorType3Type1,
)
from .page_delivery import PageDelivery
from .page_delivery_data_item import PageDeliveryDataItem
from .page_endpoint import PageEndpoint
from .page_endpoint_data_item import PageEndpointDataItem
from .page_endpoint_data_item_headers import PageEndpointDataItemHeaders
from .page_endpoint_data_item_signature_scheme import (
    PageEndpointDataItemSignatureScheme,
)
from .page_event_type import PageEventType
from .page_event_type_data_item import PageEventTypeDataItem
from .page_event_type_data_item_example_type_0 import PageEventTypeDataItemExampleType0
from .page_event_type_data_item_schema_type_0 import PageEventTypeDataItemSchemaType0
from .page_portal_session import PagePortalSession
from .page_portal_session_data_item import PagePortalSessionDataItem
from .page_state_change import PageStateChange
from .page_state_change_data_item import PageStateChangeDataItem
from .page_task import PageTask
from .page_task_data_item import PageTaskDataItem
from .page_token import PageToken
from .page_token_data_item import PageTokenDataItem
from .patch_app import PatchApp
from .patch_endpoint import PatchEndpoint
from .patch_endpoint_headers import PatchEndpointHeaders
from .patch_event_type import PatchEventType
from .patch_event_type_example_type_0 import PatchEventTypeExampleType0
from .patch_event_type_schema_type_0 import PatchEventTypeSchemaType0
from .portal_link import PortalLink
from .portal_session import PortalSession
from .previous_tls_certificate import PreviousTlsCertificate
from .public_key_out import PublicKeyOut
from .public_keys import PublicKeys
from .ready import Ready
from .ready_status import ReadyStatus
from .recover_request import RecoverRequest
from .resume import Resume
from .resumed_endpoint import ResumedEndpoint
from .rotate_endpoint_tls import RotateEndpointTls
from .rotate_secret import RotateSecret
from .rotated import Rotated
from .schema_violation import SchemaViolation
from .setting_out import SettingOut
from .settings_out import SettingsOut
from .signing_algorithm import SigningAlgorithm
from .sized_page_event import SizedPageEvent
from .sized_page_event_data_item import SizedPageEventDataItem
from .sized_page_event_data_item_data_type_0 import SizedPageEventDataItemDataType0
from .state_change import StateChange
from .status_class import StatusClass
from .task import Task
from .task_dry_run import TaskDryRun
from .task_filter import TaskFilter
from .task_filter_record import TaskFilterRecord
from .task_kind import TaskKind
from .task_request import TaskRequest
from .task_request_kind import TaskRequestKind
from .task_state import TaskState
from .test_event import TestEvent
from .test_event_data_type_0 import TestEventDataType0
from .test_event_request import TestEventRequest
from .test_event_request_data import TestEventRequestData
from .test_event_sent import TestEventSent
from .test_transformation import TestTransformation
from .tls_certificate import TlsCertificate
from .token import Token
from .token_access import TokenAccess
from .token_endpoint_auth_method import TokenEndpointAuthMethod
from .transformation_result import TransformationResult
from .transformation_result_headers import TransformationResultHeaders
from .transformation_result_payload import TransformationResultPayload
from .transformed_request import TransformedRequest
from .transformed_request_headers import TransformedRequestHeaders
from .transformed_request_payload import TransformedRequestPayload
from .verification_out import VerificationOut
from .verification_status import VerificationStatus

__all__ = (
    "Access",
    "App",
    "Attempt",
    "AttemptErrorType1",
    "AttemptErrorType2Type1",
    "AttemptErrorType3Type1",
    "AttemptWithDelivery",
    "CancelledEvent",
    "CreateApp",
    "CreatedToken",
    "CreateEndpoint",
    "CreateEndpointHeadersType0",
    "CreateEndpointSignatureScheme",
    "CreateEventType",
    "CreateEventTypeExampleType0",
    "CreateEventTypeSchemaType0",
    "CreatePortalSession",
    "CreateToken",
    "Delivery",
    "DeliveryStatus",
    "Endpoint",
    "EndpointAuth",
    "EndpointAuthRequest",
    "EndpointAuthType",
    "EndpointHeaders",
    "EndpointReplay",
    "EndpointReplayRequest",
    "EndpointSignatureScheme",
    "EndpointState",
    "EndpointStats",
    "EndpointTls",
    "EndpointTlsIn",
    "ErrorBody",
    "ErrorCode",
    "ErrorDetail",
    "Event",
    "EventBatch",
    "EventBatchItem",
    "EventBatchResult",
    "EventDataType0",
    "EventType",
    "EventTypeExampleType0",
    "EventTypeSchemaType0",
    "FilterTest",
    "FilterTestEvent",
    "FilterTestEventDataType0",
    "FilterTestResult",
    "FilterVerdict",
    "Health",
    "HealthStatus",
    "Jwk",
    "KeySet",
    "ListDeliveriesStatus",
    "NewEvent",
    "NewEventData",
    "NoOptions",
    "OnDeadLetter",
    "OperatorTaskFilter",
    "OperatorTaskRequest",
    "PageApp",
    "PageAppDataItem",
    "PageAttempt",
    "PageAttemptDataItem",
    "PageAttemptDataItemErrorType1",
    "PageAttemptDataItemErrorType2Type1",
    "PageAttemptDataItemErrorType3Type1",
    "PageDelivery",
    "PageDeliveryDataItem",
    "PageEndpoint",
    "PageEndpointDataItem",
    "PageEndpointDataItemHeaders",
    "PageEndpointDataItemSignatureScheme",
    "PageEventType",
    "PageEventTypeDataItem",
    "PageEventTypeDataItemExampleType0",
    "PageEventTypeDataItemSchemaType0",
    "PagePortalSession",
    "PagePortalSessionDataItem",
    "PageStateChange",
    "PageStateChangeDataItem",
    "PageTask",
    "PageTaskDataItem",
    "PageToken",
    "PageTokenDataItem",
    "PatchApp",
    "PatchEndpoint",
    "PatchEndpointHeaders",
    "PatchEventType",
    "PatchEventTypeExampleType0",
    "PatchEventTypeSchemaType0",
    "PortalLink",
    "PortalSession",
    "PreviousTlsCertificate",
    "PublicKeyOut",
    "PublicKeys",
    "Ready",
    "ReadyStatus",
    "RecoverRequest",
    "Resume",
    "ResumedEndpoint",
    "Rotated",
    "RotateEndpointTls",
    "RotateSecret",
    "SchemaViolation",
    "SettingOut",
    "SettingsOut",
    "SigningAlgorithm",
    "SizedPageEvent",
    "SizedPageEventDataItem",
    "SizedPageEventDataItemDataType0",
    "StateChange",
    "StatusClass",
    "Task",
    "TaskDryRun",
    "TaskFilter",
    "TaskFilterRecord",
    "TaskKind",
    "TaskRequest",
    "TaskRequestKind",
    "TaskState",
    "TestEvent",
    "TestEventDataType0",
    "TestEventRequest",
    "TestEventRequestData",
    "TestEventSent",
    "TestTransformation",
    "TlsCertificate",
    "Token",
    "TokenAccess",
    "TokenEndpointAuthMethod",
    "TransformationResult",
    "TransformationResultHeaders",
    "TransformationResultPayload",
    "TransformedRequest",
    "TransformedRequestHeaders",
    "TransformedRequestPayload",
    "VerificationOut",
    "VerificationStatus",
)
