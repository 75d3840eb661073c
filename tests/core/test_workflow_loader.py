"""Workflow loading (spec §7.1), validation messages in order (R-WF-3, C-46), YAML 1.2 scalars
(R-GEN-11, S-25), step classification (R-WF-4, R-WF-31) and args (R-WF-10, R-WF-13)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.workflow.loader import (
    arg_env_name,
    is_approval_step,
    is_input_step,
    load_workflow,
    resolve_args,
    resolve_workflow_path,
    step_kind,
    validate_workflow,
)
from lobster_tui.core.workflow.yaml12 import load_yaml

REPO = Path(__file__).resolve().parents[2]

# Each row: a workflow document (JSON text) and the first validation message, or None when valid.
# Every expected message was produced by the official runtime for the same document.
VALIDATION_CASES: list[tuple[str, str | None]] = [
    ('[1]', 'Workflow file requires a non-empty steps array'),
    ('{"steps":[]}', 'Workflow file requires a non-empty steps array'),
    ('{"steps":{}}', 'Workflow file requires a non-empty steps array'),
    ('{"steps":"x"}', 'Workflow file requires a non-empty steps array'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":null}', 'Workflow cost_limit must be an object'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":[]}', 'Workflow cost_limit must be an object'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":"x"}', 'Workflow cost_limit must be an object'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{}}', 'Workflow cost_limit.max_usd must be a non-negative number'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":null}}', None),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":"5"}}', None),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":""}}', None),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":true}}', None),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":[]}}', None),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":"abc"}}', 'Workflow cost_limit.max_usd must be a non-negative number'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":-1}}', 'Workflow cost_limit.max_usd must be a non-negative number'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":1,"action":null}}', 'Workflow cost_limit.action must be "warn" or "stop"'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":1,"action":"STOP"}}', 'Workflow cost_limit.action must be "warn" or "stop"'),
    ('{"steps":[{"id":"a","run":"x"}],"cost_limit":{"max_usd":1,"action":"stop"}}', None),
    ('{"steps":[null]}', 'Workflow step must be an object'),
    ('{"steps":["x"]}', 'Workflow step must be an object'),
    ('{"steps":[true]}', 'Workflow step must be an object'),
    ('{"steps":[0]}', 'Workflow step must be an object'),
    ('{"steps":[[]]}', 'Workflow step requires an id'),
    ('{"steps":[{"id":""}]}', 'Workflow step requires an id'),
    ('{"steps":[{"id":5}]}', 'Workflow step requires an id'),
    ('{"steps":[{"run":"x"}]}', 'Workflow step requires an id'),
    ('{"steps":[{"id":" "}]}', 'Workflow step   requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","workflow":null}]}', 'Workflow step a workflow must be a string (file path)'),
    ('{"steps":[{"id":"a","workflow":5}]}', 'Workflow step a workflow must be a string (file path)'),
    ('{"steps":[{"id":"a","workflow":" "}]}', 'Workflow step a workflow path cannot be blank'),
    ('{"steps":[{"id":"a","workflow":""}]}', 'Workflow step a workflow path cannot be blank'),
    ('{"steps":[{"id":"a","workflow":"x","workflow_args":null}]}', 'Workflow step a workflow_args must be a plain object'),
    ('{"steps":[{"id":"a","workflow":"x","workflow_args":[]}]}', 'Workflow step a workflow_args must be a plain object'),
    ('{"steps":[{"id":"a","run":"x","workflow_args":{}}]}', None),
    ('{"steps":[{"id":"a","parallel":null}]}', 'Workflow step a parallel must be an object'),
    ('{"steps":[{"id":"a","parallel":[]}]}', 'Workflow step a parallel must be an object'),
    ('{"steps":[{"id":"a","parallel":{}}]}', 'Workflow step a parallel requires a non-empty branches array'),
    ('{"steps":[{"id":"a","parallel":{"branches":{}}}]}', 'Workflow step a parallel requires a non-empty branches array'),
    ('{"steps":[{"id":"a","parallel":{"branches":[]}}]}', 'Workflow step a parallel requires a non-empty branches array'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}],"wait":null}}]}', 'Workflow step a parallel wait must be "all" or "any"'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}],"wait":"ANY"}}]}', 'Workflow step a parallel wait must be "all" or "any"'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}],"timeout_ms":null}}]}', 'Workflow step a parallel timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}],"timeout_ms":"5"}}]}', 'Workflow step a parallel timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}],"timeout_ms":1.0}}]}', None),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}],"timeout_ms":0.5}}]}', 'Workflow step a parallel timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","parallel":{"branches":[null]}}]}', 'Workflow step a parallel branches must be objects'),
    ('{"steps":[{"id":"a","parallel":{"branches":["b"]}}]}', 'Workflow step a parallel branches must be objects'),
    ('{"steps":[{"id":"a","parallel":{"branches":[[]]}}]}', 'Workflow step a parallel branch requires an id'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":""}]}}]}', 'Workflow step a parallel branch requires an id'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":5}]}}]}', 'Workflow step a parallel branch requires an id'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"a"}]}}]}', 'Workflow step a parallel branch id cannot match the step id'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"},{"id":"b","run":"x"}]}}]}', 'Workflow step a duplicate parallel branch id: b'),
    ('{"steps":[{"id":"b","run":"x"},{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}]}}]}', 'Duplicate workflow id across steps/parallel branches: b'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b"}]}}]}', 'Workflow step a parallel branch b requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":""}]}}]}', 'Workflow step a parallel branch b requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":" "}]}}]}', None),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":5}]}}]}', 'Workflow step a parallel branch b requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x","command":"y"}]}}]}', None),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x","command":5}]}}]}', 'Workflow step a parallel branch b command must be a string'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x","pipeline":null}]}}]}', 'Workflow step a parallel branch b pipeline must be a string'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x","pipeline":""}]}}]}', None),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":[1]}]}}]}', 'Workflow step a parallel branch b requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","command":true}]}}]}', 'Workflow step a parallel branch b command must be a string'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","pipeline":{}}]}}]}', 'Workflow step a parallel branch b requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":5,"pipeline":"x"}]}}]}', 'Workflow step a parallel branch b run must be a string'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"","command":"x"}]}}]}', 'Workflow step a parallel branch b requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x","pipeline":"y","command":5}]}}]}', 'Workflow step a parallel branch b can only define one of run, command, or pipeline'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}],"wait":"all","timeout_ms":0},"run":"y"}]}', 'Workflow step a parallel timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}]}},{"id":"b","run":"x"}]}', 'Duplicate workflow step id: b'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}]}},{"id":"c","parallel":{"branches":[{"id":"b","run":"x"}]}}]}', 'Duplicate workflow id across steps/parallel branches: b'),
    ('{"steps":[{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}]}},{"id":"a","run":"x"}]}', 'Duplicate workflow step id: a'),
    ('{"steps":[{"id":"a","run":"x"},{"id":"a","parallel":{"branches":[{"id":"b","run":"x"}]}}]}', 'Duplicate workflow step id: a'),
    ('{"steps":[{"id":"a","run":"x"},{"id":"a","parallel":{"branches":[{"id":"a","run":"x"}]}}]}', 'Workflow step a parallel branch id cannot match the step id'),
    ('{"steps":[{"id":"a","run":" "}]}', None),
    ('{"steps":[{"id":"a","pipeline":" "}]}', None),
    ('{"steps":[{"id":"a","command":" "}]}', None),
    ('{"steps":[{"id":"a","run":"","command":"x"}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","run":5,"command":"x"}]}', 'Workflow step a run must be a string'),
    ('{"steps":[{"id":"a","run":5}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","run":"x","pipeline":5}]}', 'Workflow step a pipeline must be a string'),
    ('{"steps":[{"id":"a","run":"x","command":5}]}', 'Workflow step a command must be a string'),
    ('{"steps":[{"id":"a","run":"x","command":"y"}]}', None),
    ('{"steps":[{"id":"a","run":"x","pipeline":null}]}', 'Workflow step a pipeline must be a string'),
    ('{"steps":[{"id":"a","run":"x","pipeline":""}]}', None),
    ('{"steps":[{"id":"a","command":[]}]}', 'Workflow step a command must be a string'),
    ('{"steps":[{"id":"a","command":5}]}', 'Workflow step a command must be a string'),
    ('{"steps":[{"id":"a","command":0}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","pipeline":5}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","pipeline":true}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","pipeline":""}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","command":""}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","run":"x","pipeline":"y"}]}', 'Workflow step a can only define one of run, command, pipeline, workflow, parallel, or for_each'),
    ('{"steps":[{"id":"x","workflow":"child.lobster","run":"echo hi"}]}', 'Workflow step x can only define one of run, command, pipeline, workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","run":"x","parallel":{"branches":[{"id":"b","run":"x"}]}}]}', 'Workflow step a can only define one of run, command, pipeline, workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","for_each":null}]}', 'Workflow step a for_each must be a string (step reference expression)'),
    ('{"steps":[{"id":"a","for_each":5}]}', 'Workflow step a for_each must be a string (step reference expression)'),
    ('{"steps":[{"id":"a","for_each":""}]}', 'Workflow step a for_each requires a non-empty steps array'),
    ('{"steps":[{"id":"a","for_each":"$x.json"}]}', 'Workflow step a for_each requires a non-empty steps array'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":{}}]}', 'Workflow step a for_each requires a non-empty steps array'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[]}]}', 'Workflow step a for_each requires a non-empty steps array'),
    ('{"steps":[{"id":"a","for_each":"","steps":[{"id":"s","run":"x"}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"","steps":[{"id":"s","run":"x"}],"command":""}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"batch_size":0}]}', 'Workflow step a batch_size must be a positive integer'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"batch_size":null}]}', 'Workflow step a batch_size must be a positive integer'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"batch_size":"2"}]}', 'Workflow step a batch_size must be a positive integer'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"batch_size":1.5}]}', 'Workflow step a batch_size must be a positive integer'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"pause_ms":null}]}', 'Workflow step a pause_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"pause_ms":"5"}]}', 'Workflow step a pause_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"pause_ms":-1}]}', 'Workflow step a pause_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"batch_size":0,"pause_ms":-1}]}', 'Workflow step a batch_size must be a positive integer'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"pause_ms":-1,"approval":true}]}', 'Workflow step a pause_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"approval":"yes"}]}', 'Workflow step a for_each steps cannot define approval (use a separate step after the loop)'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"approval":true,"input":{},"run":"x"}]}', 'Workflow step a for_each steps cannot define approval (use a separate step after the loop)'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"input":null}]}', 'Workflow step a input must be an object'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"input":"x"}]}', 'Workflow step a input must be an object'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"stdin":"x","input":{}}]}', 'Workflow step a for_each steps cannot define input (use a separate step after the loop)'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"stdin":""}]}', 'Workflow step a for_each steps cannot define stdin (loop input comes from the for_each expression)'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"stdin":false}]}', 'Workflow step a for_each steps cannot define stdin (loop input comes from the for_each expression)'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"stdin":"x","item_var":5}]}', 'Workflow step a for_each steps cannot define stdin (loop input comes from the for_each expression)'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"run":"x","stdin":"x"}]}', 'Workflow step a for_each steps cannot define stdin (loop input comes from the for_each expression)'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"run":"x","item_var":5}]}', 'Workflow step a for_each cannot also define run, command, pipeline, workflow, or parallel'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"run":null}]}', 'Workflow step a run must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"run":5}]}', 'Workflow step a run must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"run":true}]}', 'Workflow step a run must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"command":" "}]}', 'Workflow step a for_each cannot also define run, command, pipeline, workflow, or parallel'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"command":[]}]}', 'Workflow step a for_each cannot also define run, command, pipeline, workflow, or parallel'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"pipeline":0}]}', 'Workflow step a pipeline must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"workflow":"x"}]}', 'Workflow step a for_each cannot also define run, command, pipeline, workflow, or parallel'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"workflow":""}]}', 'Workflow step a workflow path cannot be blank'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"parallel":null}]}', 'Workflow step a parallel must be an object'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"parallel":{}}]}', 'Workflow step a parallel requires a non-empty branches array'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"parallel":{"branches":[{"id":"b","run":"x"}]}}]}', 'Workflow step a for_each cannot also define run, command, pipeline, workflow, or parallel'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"item_var":null}]}', 'Workflow step a item_var must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"item_var":5,"index_var":6}]}', 'Workflow step a item_var must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"index_var":5}]}', 'Workflow step a index_var must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"item_var":"index"}]}', 'Workflow step a item_var and index_var cannot be the same'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}],"item_var":"x","index_var":"x","workflow_args":[]}]}', 'Workflow step a workflow_args must be a plain object'),
    ('{"steps":[{"id":"loop","for_each":"$x.json","item_var":"x","index_var":"x","steps":[{"id":"s","command":"echo"}]}]}', 'Workflow step loop item_var and index_var cannot be the same'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[null]}]}', 'Workflow step a for_each sub-step requires an id'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[[]]}]}', 'Workflow step a for_each sub-step requires an id'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":""}]}]}', 'Workflow step a for_each sub-step requires an id'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"item"}]}]}', "Workflow step a for_each sub-step id 'item' conflicts with loop variable"),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"index"}]}]}', "Workflow step a for_each sub-step id 'index' conflicts with loop variable"),
    ('{"steps":[{"id":"a","for_each":"$x.json","item_var":"","steps":[{"id":"item","run":"x"}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","id2":1,"run":"x"}],"item_var":"s"}]}', "Workflow step a for_each sub-step id 's' conflicts with loop variable"),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"},{"id":"s"}]}]}', 'Workflow step a duplicate for_each sub-step id: s'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"a","run":"x"}]}]}', None),
    ('{"steps":[{"id":"s","run":"x"},{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x"}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","approval":true}]}]}', 'Workflow step a for_each sub-steps cannot contain approval or input steps'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","approval":"required"}]}]}', 'Workflow step a for_each sub-steps cannot contain approval or input steps'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","approval":false}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","input":{}}]}]}', 'Workflow step a for_each sub-steps cannot contain approval or input steps'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","input":null}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":5,"approval":true}]}]}', 'Workflow step a for_each sub-steps cannot contain approval or input steps'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","workflow":"x","approval":true}]}]}', 'Workflow step a for_each sub-steps cannot contain approval or input steps'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":5}]}]}', 'Workflow step a for_each sub-step s run must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":null}]}]}', 'Workflow step a for_each sub-step s run must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","pipeline":[]}]}]}', 'Workflow step a for_each sub-step s pipeline must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","command":5,"workflow":"x"}]}]}', 'Workflow step a for_each sub-step s command must be a string'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","workflow":"x"}]}]}', 'Workflow step a for_each sub-step s cannot define workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","workflow":null}]}]}', 'Workflow step a for_each sub-step s requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","workflow":""}]}]}', 'Workflow step a for_each sub-step s requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","workflow":0}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","workflow":false}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","workflow":" "}]}]}', 'Workflow step a for_each sub-step s cannot define workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","parallel":{}}]}]}', 'Workflow step a for_each sub-step s cannot define workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","parallel":[]}]}]}', 'Workflow step a for_each sub-step s cannot define workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","parallel":null}]}]}', 'Workflow step a for_each sub-step s requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","for_each":""}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","for_each":" "}]}]}', 'Workflow step a for_each sub-step s cannot define workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","for_each":0}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","for_each":1}]}]}', 'Workflow step a for_each sub-step s cannot define workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","for_each":null}]}]}', 'Workflow step a for_each sub-step s requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s"}]}]}', 'Workflow step a for_each sub-step s requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","stdin":"x"}]}]}', 'Workflow step a for_each sub-step s requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":" "}]}]}', 'Workflow step a for_each sub-step s requires run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"","command":"x"}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":" ","command":"x"}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","command":"x"}]}]}', None),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","pipeline":"x"}]}]}', 'Workflow step a for_each sub-step s can only define one of run, command, or pipeline'),
    ('{"steps":[{"id":"a","for_each":"$x.json","steps":[{"id":"s","run":"x","pipeline":" "}]}]}', None),
    ('{"steps":[{"id":"a","approval":true}]}', None),
    ('{"steps":[{"id":"a","approval":false}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","approval":""}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","approval":" "}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","approval":"required"}]}', None),
    ('{"steps":[{"id":"a","approval":[]}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","approval":{}}]}', None),
    ('{"steps":[{"id":"a","approval":0}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","approval":1}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","input":{}}]}', 'Workflow step a input.prompt must be a string'),
    ('{"steps":[{"id":"a","input":[]}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","input":null}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","input":"x"}]}', 'Workflow step a requires run, command, pipeline, workflow, parallel, for_each, approval, or input'),
    ('{"steps":[{"id":"a","input":{},"run":"x"}]}', 'Workflow step a input steps cannot define run, command, pipeline, workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","input":{},"run":5}]}', 'Workflow step a run must be a string'),
    ('{"steps":[{"id":"a","input":{},"approval":true}]}', 'Workflow step a cannot define both approval and input'),
    ('{"steps":[{"id":"a","input":{},"approval":true,"run":"x"}]}', 'Workflow step a input steps cannot define run, command, pipeline, workflow, parallel, or for_each'),
    ('{"steps":[{"id":"a","input":[],"run":"x"}]}', 'Workflow step a input must be an object'),
    ('{"steps":[{"id":"a","input":null,"run":"x"}]}', 'Workflow step a input must be an object'),
    ('{"steps":[{"id":"a","input":{"prompt":5}}]}', 'Workflow step a input.prompt must be a string'),
    ('{"steps":[{"id":"a","input":{"prompt":null}}]}', 'Workflow step a input.prompt must be a string'),
    ('{"steps":[{"id":"a","input":{"prompt":"p"}}]}', 'Workflow step a input.responseSchema must be an object'),
    ('{"steps":[{"id":"a","input":{"responseSchema":{}}}]}', 'Workflow step a input.prompt must be a string'),
    ('{"steps":[{"id":"a","input":{"prompt":"p","responseSchema":"x"}}]}', 'Workflow step a input.responseSchema must be an object'),
    ('{"steps":[{"id":"a","input":{"prompt":"p","responseSchema":true}}]}', 'Workflow step a input.responseSchema must be an object'),
    ('{"steps":[{"id":"a","input":{"prompt":"p","responseSchema":{"type":"object"}}}]}', None),
    ('{"steps":[{"id":"a","input":{"prompt":"p","responseSchema":{"type":"foo"}}}]}', 'Workflow step a input.responseSchema is invalid: schema is invalid: data/type must be equal to one of the allowed values, data/type must be array, data/type must match a schema in anyOf'),
    ('{"steps":[{"id":"a","input":{"prompt":"p","responseSchema":{"minLength":-1}}}]}', 'Workflow step a input.responseSchema is invalid: schema is invalid: data/minLength must be >= 0'),
    ('{"steps":[{"id":"a","approval":{"initiated_by":5}}]}', 'Workflow step a approval.initiated_by must be a string'),
    ('{"steps":[{"id":"a","approval":{"initiatedBy":null}}]}', 'Workflow step a approval.initiatedBy must be a string'),
    ('{"steps":[{"id":"a","approval":{"required_approver":5,"initiatedBy":5}}]}', 'Workflow step a approval.initiatedBy must be a string'),
    ('{"steps":[{"id":"a","approval":{"requiredApprover":true}}]}', 'Workflow step a approval.requiredApprover must be a string'),
    ('{"steps":[{"id":"a","approval":{"require_different_approver":"yes"}}]}', 'Workflow step a approval.require_different_approver must be a boolean'),
    ('{"steps":[{"id":"a","approval":{"requireDifferentApprover":null}}]}', 'Workflow step a approval.requireDifferentApprover must be a boolean'),
    ('{"steps":[{"id":"a","approval":{"requireDifferentApprover":null,"initiated_by":1}}]}', 'Workflow step a approval.initiated_by must be a string'),
    ('{"steps":[{"id":"a","approval":{"initiated_by":5,"initiatedBy":5}}]}', 'Workflow step a approval.initiated_by must be a string'),
    ('{"steps":[{"id":"a","approval":{"initiatedBy":5,"initiated_by":5}}]}', 'Workflow step a approval.initiated_by must be a string'),
    ('{"steps":[{"id":"a","approval":{"required_approver":5,"requiredApprover":5}}]}', 'Workflow step a approval.required_approver must be a string'),
    ('{"steps":[{"id":"a","approval":{"requireDifferentApprover":5,"require_different_approver":5}}]}', 'Workflow step a approval.require_different_approver must be a boolean'),
    ('{"steps":[{"id":"a","approval":{"requireDifferentApprover":5,"requiredApprover":5}}]}', 'Workflow step a approval.requiredApprover must be a string'),
    ('{"steps":[{"id":"a","approval":{"prompt":5,"items":5,"preview":5}}]}', None),
    ('{"steps":[{"id":"a","run":"x","approval":{"initiated_by":5}}]}', 'Workflow step a approval.initiated_by must be a string'),
    ('{"steps":[{"id":"a","run":"x","approval":[{"initiated_by":5}]}]}', None),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":0}]}', 'Workflow step a timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":null}]}', 'Workflow step a timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":1.5}]}', 'Workflow step a timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":"fast"}]}', 'Workflow step a timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":2147483648}]}', 'Workflow step a timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":2147483647}]}', None),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":true}]}', 'Workflow step a timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":0,"approval":{"initiated_by":5}}]}', 'Workflow step a approval.initiated_by must be a string'),
    ('{"steps":[{"id":"a","run":"x","timeout_ms":0,"on_error":"x"}]}', 'Workflow step a timeout_ms must be a positive integer between 1 and 2147483647'),
    ('{"steps":[{"id":"a","run":"x","on_error":null}]}', 'Workflow step a on_error must be "stop", "continue", or "skip_rest"'),
    ('{"steps":[{"id":"a","run":"x","on_error":"Stop"}]}', 'Workflow step a on_error must be "stop", "continue", or "skip_rest"'),
    ('{"steps":[{"id":"a","run":"x","on_error":"x","retry":null}]}', 'Workflow step a on_error must be "stop", "continue", or "skip_rest"'),
    ('{"steps":[{"id":"a","run":"x","retry":null}]}', 'Workflow step a retry must be an object'),
    ('{"steps":[{"id":"a","run":"x","retry":[]}]}', 'Workflow step a retry must be an object'),
    ('{"steps":[{"id":"a","run":"x","retry":5}]}', 'Workflow step a retry must be an object'),
    ('{"steps":[{"id":"a","run":"x","retry":{}}]}', None),
    ('{"steps":[{"id":"a","run":"x","retry":{"max":0}}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x","retry":{"max":null}}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x","retry":{"max":1.5}}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x","retry":{"max":"3"}}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x","retry":{"max":true}}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x","retry":{"backoff":null}}]}', 'Workflow step a retry.backoff must be "fixed" or "exponential"'),
    ('{"steps":[{"id":"a","run":"x","retry":{"backoff":"linear","max":0}}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x","retry":{"delay_ms":-1}}]}', 'Workflow step a retry.delay_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","run":"x","retry":{"delay_ms":null}}]}', 'Workflow step a retry.delay_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","run":"x","retry":{"delay_ms":"5"}}]}', 'Workflow step a retry.delay_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","run":"x","retry":{"max_delay_ms":-1,"delay_ms":-1}}]}', 'Workflow step a retry.delay_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","run":"x","retry":{"max_delay_ms":-1,"jitter":1}}]}', 'Workflow step a retry.max_delay_ms must be a finite non-negative number'),
    ('{"steps":[{"id":"a","run":"x","retry":{"jitter":1}}]}', 'Workflow step a retry.jitter must be a boolean'),
    ('{"steps":[{"id":"a","run":"x","retry":{"jitter":null}}]}', 'Workflow step a retry.jitter must be a boolean'),
    ('{"steps":[{"id":"a","run":"x","retry":{"max":3,"backoff":"exponential","delay_ms":0.5,"max_delay_ms":0,"jitter":false}}]}', None),
    ('{"steps":[{"id":"a","run":"x","retry":{"max":0}},{"id":"a","run":"x"}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x"},{"id":"a","run":"x","retry":{"max":0}}]}', 'Workflow step a retry.max must be a positive integer'),
    ('{"steps":[{"id":"a","run":"x"},{"id":"a","run":"x"}]}', 'Duplicate workflow step id: a'),
    ('{"steps":[{"id":"a","run":"x"},{"id":"b","run":"x"},{"id":"a","run":"x"}]}', 'Duplicate workflow step id: a'),
    ('{"name":5,"description":[],"args":"x","env":5,"cwd":7,"unknown":1,"steps":[{"id":"a","run":"x","when":5,"stdin":{"a":1},"env":[],"cwd":[]}]}', None),
]


def _validation_message(doc: Any) -> str | None:
    try:
        validate_workflow(doc)
    except LobsterRuntimeError as error:
        return error.message
    return None


@pytest.mark.parametrize(("text", "message"), VALIDATION_CASES)
def test_validation_reports_the_first_problem(text: str, message: str | None) -> None:
    assert _validation_message(json.loads(text)) == message


C46_YAML_CASES: list[tuple[str, str | None]] = [
    ("steps: []\n", "Workflow file requires a non-empty steps array"),
    (
        "steps:\n  - id: x\n    workflow: child.lobster\n    run: echo hi\n",
        "Workflow step x can only define one of run, command, pipeline, workflow, parallel, or for_each",
    ),
    (
        "steps:\n  - id: loop\n    for_each: $x.json\n    item_var: x\n    index_var: x\n"
        "    steps: [{id: s, command: echo}]\n",
        "Workflow step loop item_var and index_var cannot be the same",
    ),
    (
        "steps:\n  - id: x\n    run: 5\n",
        "Workflow step x requires run, command, pipeline, workflow, parallel, for_each, approval, or input",
    ),
    (
        "steps:\n  - id: p\n    parallel: {branches: [{id: dup, run: a}, {id: dup, run: b}]}\n",
        "Workflow step p duplicate parallel branch id: dup",
    ),
    ("steps:\n  - id: p\n    parallel: {branches: []}\n", "Workflow step p parallel requires a non-empty branches array"),
    ("steps:\n  - id: s\n    run: x\n    retry: {max: 0}\n", "Workflow step s retry.max must be a positive integer"),
    # YAML 1.2: `approval: yes` is the prompt "yes", a valid approval step (S-25) ...
    ("steps:\n  - id: gate\n    approval: yes\n", None),
    # ... and `approval: off` is the prompt "off", not false, so it clashes with `input`.
    (
        "steps:\n  - id: gate\n    approval: off\n    input: {prompt: p, responseSchema: {}}\n",
        "Workflow step gate cannot define both approval and input",
    ),
]


@pytest.mark.parametrize(("yaml_text", "message"), C46_YAML_CASES)
def test_c46_yaml_files(tmp_path: Path, yaml_text: str, message: str | None) -> None:
    path = tmp_path / "wf.lobster"
    path.write_text(yaml_text)
    assert _validation_message(load_workflow(str(path))) == message


@pytest.mark.parametrize("timeout", ["0", "1.5", '"fast"', "2147483648", "-1", "true", "null"])
def test_c31_timeout_values_are_rejected(timeout: str) -> None:
    doc = json.loads(f'{{"steps": [{{"id": "slow", "run": "sleep 5", "timeout_ms": {timeout}}}]}}')
    assert _validation_message(doc) == "Workflow step slow timeout_ms must be a positive integer between 1 and 2147483647"


def test_an_uncompilable_schema_is_reported_with_the_compiler_message(monkeypatch: pytest.MonkeyPatch) -> None:
    from lobster_tui.core import schema

    def refuse(value: Any, **_: Any) -> Any:
        raise schema.SchemaCompileError(f"schema is invalid: saw {json.dumps(value)}")

    monkeypatch.setattr(schema, "compile_schema", refuse)
    doc = {"steps": [{"id": "ask", "input": {"prompt": "p", "responseSchema": {"type": "foo"}}}]}
    assert _validation_message(doc) == 'Workflow step ask input.responseSchema is invalid: schema is invalid: saw {"type": "foo"}'


def test_compile_warnings_reach_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    from lobster_tui.core import schema

    def compile_with_warning(value: Any, warn: Any = None) -> Any:
        warn('unknown format "x" ignored in schema at path "#"')

    monkeypatch.setattr(schema, "compile_schema", compile_with_warning)
    lines: list[str] = []
    validate_workflow({"steps": [{"id": "a", "input": {"prompt": "p", "responseSchema": {}}}]}, warn=lines.append)
    assert lines == ['unknown format "x" ignored in schema at path "#"']


def test_validation_without_input_steps_does_not_import_the_schema_compiler() -> None:
    code = (
        "import sys\n"
        "from lobster_tui.core.workflow.loader import validate_workflow\n"
        "validate_workflow({'steps': [{'id': 'a', 'run': 'x'}, {'id': 'b', 'approval': True}]})\n"
        "assert 'lobster_tui.core.schema' not in sys.modules\n"
        "assert 'jsonschema' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# --- loading ---------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_yaml_and_json_files_load_by_extension(tmp_path: Path) -> None:
    yaml_doc = load_workflow(_write(tmp_path, "a.YML", "steps:\n  - id: a\n    run: echo\n"))
    json_doc = load_workflow(_write(tmp_path, "b.json", '{"steps": [{"id": "a", "run": "echo"}]}'))
    assert yaml_doc == json_doc == {"steps": [{"id": "a", "run": "echo"}]}


def test_a_lobster_file_may_hold_compact_json(tmp_path: Path) -> None:
    path = _write(tmp_path, "wf.lobster", '{"steps":[{"id":"a","run":"echo","when":"$x.json==1"}]}')
    assert load_workflow(path) == {"steps": [{"id": "a", "run": "echo", "when": "$x.json==1"}]}


@pytest.mark.parametrize(("name", "text"), [("wf.json", "null"), ("wf.json", "5"), ("wf.lobster", ""), ("wf.yaml", "hello")])
def test_the_document_must_be_an_object(tmp_path: Path, name: str, text: str) -> None:
    with pytest.raises(LobsterRuntimeError, match="^Workflow file must be a JSON/YAML object$"):
        load_workflow(_write(tmp_path, name, text))


def test_a_top_level_list_loads_and_then_fails_the_steps_check(tmp_path: Path) -> None:
    doc = load_workflow(_write(tmp_path, "wf.json", "[1]"))
    assert _validation_message(doc) == "Workflow file requires a non-empty steps array"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("wf.lobster", "steps:\n  - id: a\n    run: echo\n    run: x\n", "Map keys must be unique at line 4, column 5"),
        ("wf.lobster", "steps: [\n", "while parsing"),
        ("wf.lobster", "---\nsteps: []\n---\nx: 1\n", "expected a single document"),
        ("wf.json", '{"steps": [', "Expecting"),
        ("wf.json", '{"a": NaN}', "Unexpected token N"),
    ],
)
def test_parse_errors_carry_the_parser_message(tmp_path: Path, name: str, text: str, message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        load_workflow(_write(tmp_path, name, text))
    assert message in caught.value.message


def test_keys_are_ordered_as_a_javascript_object_enumerates_them(tmp_path: Path) -> None:
    doc = load_workflow(_write(tmp_path, "wf.yaml", "b: 1\n2: x\n1: y\n'01': z\nsteps: [{id: a, run: x, env: {z: 1, 10: 2}}]\n"))
    assert isinstance(doc, dict)
    assert list(doc) == ["1", "2", "b", "01", "steps"]
    assert list(doc["steps"][0]["env"]) == ["10", "z"]


def test_resolve_workflow_path(tmp_path: Path) -> None:
    (tmp_path / "wf.LOBSTER").write_text("steps: []\n")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "dir.lobster").mkdir()
    os.symlink(tmp_path / "wf.LOBSTER", tmp_path / "link.yml")
    os.symlink(tmp_path / "wf.LOBSTER", tmp_path / "link.txt")

    assert resolve_workflow_path("wf.LOBSTER", str(tmp_path)) == str(tmp_path / "wf.LOBSTER")
    assert resolve_workflow_path(str(tmp_path / "link.yml"), "/") == str(tmp_path / "link.yml")
    with pytest.raises(LobsterRuntimeError, match="^Workflow path is not a file$"):
        resolve_workflow_path("dir.lobster", str(tmp_path))
    for name in ("notes.txt", "link.txt"):
        with pytest.raises(LobsterRuntimeError, match=r"^Workflow file must end in \.lobster, \.yaml, \.yml, or \.json$"):
            resolve_workflow_path(name, str(tmp_path))
    missing = tmp_path / "missing.lobster"
    with pytest.raises(LobsterRuntimeError) as caught:
        resolve_workflow_path("missing.lobster", str(tmp_path))
    assert caught.value.message == f"ENOENT: no such file or directory, stat '{missing}'"


# --- YAML 1.2 --------------------------------------------------------------------------------------

# The official runtime's `yaml` package (1.2 core schema) gives these values for the same scalars.
YAML_SCALARS: list[tuple[str, Any]] = [
    ("yes", "yes"),
    ("no", "no"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("n", "n"),
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("tRue", "tRue"),
    ("false", False),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("~", None),
    ("", None),
    ("012", 12),
    ("0o17", 15),
    ("0x1F", 31),
    ("0X1F", "0X1F"),
    ("-0o7", "-0o7"),
    ("-0x1", "-0x1"),
    ("+12", 12),
    ("1_000", "1_000"),
    ("0b101", "0b101"),
    ("1.5", 1.5),
    (".5", 0.5),
    ("1.", 1.0),
    ("-.5e3", -500.0),
    ("0.1e+5", 10000.0),
    ("1e3", 1000.0),
    ("1E-2", 0.01),
    ("1e", "1e"),
    (".inf", math.inf),
    ("-.Inf", -math.inf),
    ("+.INF", math.inf),
    ("2001-12-14", "2001-12-14"),
    ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    ("1:20", "1:20"),
    ("=", "="),
    ('"true"', "true"),
    ("'012'", "012"),
]


@pytest.mark.parametrize(("scalar", "expected"), YAML_SCALARS)
def test_yaml_core_schema_scalars(scalar: str, expected: Any) -> None:
    value = load_yaml(f"v: {scalar}\n")["v"]
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("scalar", [".nan", ".NaN", ".NAN"])
def test_yaml_nan(scalar: str) -> None:
    assert math.isnan(load_yaml(f"v: {scalar}\n")["v"])


def test_yaml_merge_keys_are_plain_keys() -> None:
    assert load_yaml("a: &x {k: 1}\n<<: *x\n") == {"a": {"k": 1}, "<<": {"k": 1}}


def test_yaml_keys_become_strings_as_in_javascript() -> None:
    assert load_yaml("{true: 1, 1: 2, null: 3, 1.50: 4, .inf: 5, 0x1F: 6}") == {
        "true": 1,
        "1": 2,
        "": 3,
        "1.5": 4,
        "Infinity": 5,
        "31": 6,
    }


def test_yaml_tags_outside_the_core_schema_keep_their_text() -> None:
    doc = load_yaml("a: !custom x\nb: !!timestamp 2001-01-01\nc: !!binary aGk=\nd: !!set {p, q}\ne: !custom [1, {x: 1}]\n")
    assert doc == {"a": "x", "b": "2001-01-01", "c": "aGk=", "d": {"p": None, "q": None}, "e": [1, {"x": 1}]}


def test_yaml_one_and_true_are_different_keys() -> None:
    assert load_yaml("{1: a, true: b}") == {"1": "a", "true": "b"}


# --- step classification ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("approval", "expected"),
    [(True, True), ("required", True), ("Proceed?", True), ({}, True), (False, False), ("", False), ("  ", False),
     (None, False), ([], False), (1, False)],
)
def test_is_approval_step(approval: Any, expected: bool) -> None:
    assert is_approval_step({"id": "a", "approval": approval}) is expected


@pytest.mark.parametrize(("value", "expected"), [({}, True), ({"prompt": "p"}, True), ([], False), (None, False), ("x", False)])
def test_is_input_step(value: Any, expected: bool) -> None:
    assert is_input_step({"id": "a", "input": value}) is expected
    assert is_input_step({"id": "a"}) is False


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        ({"parallel": {"branches": []}, "run": "x"}, "parallel"),
        ({"workflow": "child.lobster", "pipeline": "x"}, "workflow"),
        ({"workflow": "  ", "pipeline": "head"}, "pipeline"),
        ({"pipeline": " ", "run": "echo"}, "shell"),
        ({"command": "echo"}, "shell"),
        ({"run": "", "command": "echo"}, "none"),
        ({"run": 5, "command": "echo"}, "shell"),
        ({"run": "  "}, "none"),
        ({"approval": True}, "none"),
    ],
)
def test_step_kind(step: dict[str, Any], kind: str) -> None:
    assert step_kind({"id": "s", **step}) == kind


# --- args ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "provided", "expected"),
    [
        ({"who": {"default": "world"}, "n": {"default": None}, "bare": {}, "scalar": 5}, {}, {"who": "world", "n": None}),
        ({"who": {"default": "world"}}, {"who": "bob", "extra": [1]}, {"who": "bob", "extra": [1]}),
        ({"who": {"default": "world"}}, [7, 8], {"0": 7, "1": 8, "who": "world"}),
        ({"who": {"default": "world"}}, None, {"who": "world"}),
        ({"who": {"default": "world"}}, 5, {"who": "world"}),
        ({"who": {"default": "world"}}, True, {"who": "world"}),
        ({"who": {"default": "world"}}, "ab", {"0": "a", "1": "b", "who": "world"}),
        ([{"default": "A"}, {"x": 1}, {"default": None}], {}, {"0": "A", "2": None}),
        ("not a map", {"a": 1}, {"a": 1}),
        (None, {"b": 1, "2": 2, "1": 1}, {"1": 1, "2": 2, "b": 1}),
    ],
)
def test_resolve_args(declared: Any, provided: Any, expected: dict[str, Any]) -> None:
    resolved = resolve_args({"args": declared, "steps": []}, provided)
    assert resolved == expected
    assert list(resolved) == list(expected)
    assert resolve_args({"args": declared, "steps": []}, resolved) == resolved


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("text", "TEXT"),
        ("user-id", "USER_ID"),
        ("__edge__key__", "EDGE_KEY"),
        ("my-arg x", "MY_ARG_X"),
        ("  spaced  ", "SPACED"),
        ("a.b/c", "A_B_C"),
        ("ünï", "N"),
        ("---", None),
        ("", None),
        ("   ", None),
    ],
)
def test_arg_env_name(name: str, expected: str | None) -> None:
    assert arg_env_name(name) == expected


# --- against the official runtime ------------------------------------------------------------------


def _official_bin() -> str | None:
    for candidate in (os.environ.get("LOBSTER_OFFICIAL_BIN", ""), "/work/official-lobster/node_modules/.bin/lobster"):
        if candidate and Path(candidate).exists() and shutil.which("node"):
            return candidate
    return None


@pytest.mark.official
def test_validation_messages_match_the_official_runtime(tmp_path: Path) -> None:
    official = _official_bin()
    if official is None:
        pytest.skip("the official Lobster runtime (Node + @clawdbot/lobster) is not installed")
    # A sample keeps this fast (Node starts slowly); the whole table was checked this way when written.
    sample = VALIDATION_CASES[::20]

    def official_message(index: int) -> str | None:
        path = tmp_path / f"wf{index}.json"
        path.write_text(sample[index][0])
        proc = subprocess.run(
            [official, "graph", "--format", "ascii", "--file", str(path)], capture_output=True, text=True, timeout=60
        )
        return proc.stderr.removeprefix("Error: ").rstrip("\n") if proc.returncode else None

    with ThreadPoolExecutor(4) as pool:
        theirs = list(pool.map(official_message, range(len(sample))))
    assert [_validation_message(json.loads(text)) for text, _ in sample] == theirs


def test_the_yaml_parse_cache_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lobster_tui.core.workflow import loader

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    wf = tmp_path / "wf.lobster"
    wf.write_text("steps:\n  - id: a\n    run: echo yes\n")
    first = loader.load_workflow(str(wf))
    [entry] = (tmp_path / "cache" / "lobster-tui" / "yaml").iterdir()
    assert json.loads(entry.read_text())["doc"] == first
    # An entry whose text differs (a CRC collision, a stale file) is never used.
    entry.write_text(json.dumps({"text": "something else", "doc": {"steps": "poisoned"}}))
    assert loader.load_workflow(str(wf)) == first
    wf.write_text("steps:\n  - id: a\n    run: echo no\n")
    assert loader.load_workflow(str(wf))["steps"][0]["run"] == "echo no"
    monkeypatch.setenv("LOBSTER_YAML_CACHE", "0")
    assert loader.load_workflow(str(wf))["steps"][0]["id"] == "a"
