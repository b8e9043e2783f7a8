/**
 * A worker thread of `skiff verify`'s runner (runner.ts): loads the campaign function once, then runs
 * each run index the main thread posts and posts back its report (or the error it threw).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { callForRun, loadCampaign, type RunRequest, type RunResponse, type RunnerWorkerData } from './runner';

const port = parentPort;
if (port === null) throw new Error('runner-worker.js runs only as a worker thread of runner.ts');
const data = workerData as RunnerWorkerData;
const runCampaign = loadCampaign(data.campaignModule);
port.on('message', (request: RunRequest) => {
  runCampaign(callForRun(data.campaign, request.run)).then(
    (report) => port.postMessage({ run: request.run, report } satisfies RunResponse),
    (err: unknown) =>
      port.postMessage({ run: request.run, error: (err as Error).stack ?? String(err) } satisfies RunResponse),
  );
});
