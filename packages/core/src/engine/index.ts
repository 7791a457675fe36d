export { Engine, type EngineOptions, type EngineServices, type EngineState } from './engine.js';
export { RunPipeline, slotResultId, type RunSpec, type RunOutcome, type PipelineServices } from './run-pipeline.js';
export { AlertDispatcher, alertTitle, toAlertMessage, type DispatcherOptions } from './dispatcher.js';
export { heartbeatRunner } from './heartbeat-runner.js';
export { scrubDeep, scrubSecrets, SCRUBBED } from './scrub.js';
export { MinHeap } from './min-heap.js';
