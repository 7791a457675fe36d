// A load of HTTP clients in a worker thread of its own, so that a test measuring another
// client's latency measures the server, not this load's parsing in the test's event loop.
// workerData: { url, headers, connections }. Each connection sends GET `url` again as soon as
// its answer ends. On the message 'stop' every connection hangs up, with requests under way,
// and the worker posts the count of answers by status code.
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, headers, connections } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const hangUp = new AbortController();
const statuses = {};

function once() {
  return new Promise((resolve) => {
    const req = request(url, { agent, headers, signal: hangUp.signal }, (res) => {
      res.on('end', () => {
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        resolve();
      });
      res.on('error', resolve);
      res.resume();
    });
    req.on('error', resolve);
    req.end();
  });
}

const load = Promise.all(Array.from({ length: connections }, async () => {
  while (!hangUp.signal.aborted) await once();
}));

parentPort.once('message', async () => {
  hangUp.abort();
  await load;
  agent.destroy();
  parentPort.postMessage(statuses);
});
