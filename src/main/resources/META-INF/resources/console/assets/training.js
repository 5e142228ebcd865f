// Fulcrum console: a training job's page. Draws the loss and reward curves of the job's gradient steps with the
// console's chart helper (charts.js, uPlot served from the jar) and, while the job runs, asks the console's events.json
// for the events after the last one seen every second: new events are added to the table and to the curves without
// reloading. Stops once the job finished.
(function () {
  'use strict';

  var job = document.getElementById('job');
  if (!job || !window.FulcrumCharts) {
    return;
  }
  var POLL_MS = 1000;
  var steps = [];   // x: gradient step number, from 1
  var loss = [];
  var reward = [];

  function number(value) {
    return typeof value === 'number' && isFinite(value) ? value : null;
  }

  function addStep(metrics) {
    steps.push(steps.length + 1);
    loss.push(number(metrics.loss));
    reward.push(number(metrics.reward));
  }

  function chart(id, label, values) {
    window.FulcrumCharts.draw(document.getElementById(id), { x: steps, series: [{ name: label, values: values }] },
      { xLabel: 'gradient step', yLabel: label, height: 240 });
  }

  function draw() {
    if (steps.length === 0) {
      return;
    }
    document.getElementById('no-curves').textContent = '';
    chart('loss-chart', 'loss', loss);
    if (reward.some(function (r) { return r !== null; })) {
      document.getElementById('reward-figure').hidden = false;
      chart('reward-chart', 'reward', reward);
    }
  }

  function compact(data) {
    return Object.keys(data || {}).map(function (key) {
      var value = data[key];
      return key + ' ' + (typeof value === 'number' && !Number.isInteger(value) ? value.toPrecision(4) : value);
    }).join(', ');
  }

  function addRow(event) {
    var row = document.createElement('tr');
    row.className = 'event';
    row.dataset.type = event.type;
    row.dataset.id = event.id;
    [event.id, event.type, event.created_at || '', compact(event.data)].forEach(function (text, i) {
      var cell = document.createElement('td');
      cell.textContent = text;
      if (i === 3) {
        cell.className = 'mono';
      }
      row.appendChild(cell);
    });
    document.querySelector('#events tbody').appendChild(row);
  }

  document.querySelectorAll('#events tr.event[data-metrics]').forEach(function (row) {
    addStep(JSON.parse(row.dataset.metrics));
  });
  draw();

  var live = document.getElementById('live');
  var after = job.dataset.after;
  function finished(status) {
    job.dataset.finished = 'true';
    live.textContent = 'The job has finished (' + status + '). ';
    var link = document.createElement('a');
    link.href = job.dataset.model;
    link.id = 'checkpoints-link';
    link.textContent = 'See the model\'s checkpoints';
    live.appendChild(link);
  }

  function poll() {
    var url = job.dataset.events + (after ? '?after=' + encodeURIComponent(after) : '');
    fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' }).then(function (response) {
      if (!response.ok) {
        throw new Error('events: ' + response.status);
      }
      return response.json();
    }).then(function (page) {
      page.events.forEach(function (event) {
        addRow(event);
        if (event.type === 'gradient_step') {
          addStep(event.data || {});
        }
      });
      if (page.events.length > 0) {
        draw();
      }
      after = page.after || after;
      document.getElementById('job-state').textContent = page.status;
      document.getElementById('job-started').textContent = page.started_at || '';
      document.getElementById('job-finished').textContent = page.finished_at || '';
      if (page.finished) {
        finished(page.status);
      } else {
        setTimeout(poll, POLL_MS);
      }
    }).catch(function () {
      live.textContent = 'Lost contact with the server; trying again.';
      setTimeout(poll, POLL_MS * 3);
    });
  }

  if (job.dataset.finished !== 'true') {
    setTimeout(poll, POLL_MS);
  }
}());
