/*
 * Fulcrum console charts: a small wrapper around uPlot (loaded before this file, /webjars/uplot/...) and the run page.
 *
 * FulcrumCharts.draw(container, data, options) draws columnar data into a container:
 *   data    = {x: [numbers, ascending], series: [{name, values: [numbers or null, one per x]}], time: bool}
 *   options = {xLabel, yLabel, height, smoothing (0..1, exponential moving average)}
 * and then sets on the container data-points (the points of the first series), data-series (the names, comma
 * separated), data-rows (the length of x) and data-drawn-at (ms since the page's navigation started), so that tests
 * read what was drawn. The chart follows the container's width. Containers with a data-chart attribute (the same
 * JSON) are drawn when the page loads. FulcrumCharts.load(container, url, options) fetches the data first.
 */
(function () {
  'use strict';

  const COLORS = ['#2450b2', '#d1495b', '#1e7a3c', '#e09f3e', '#7b2cbf', '#00798c', '#6a4c93', '#8d6e63'];
  const charts = new WeakMap();

  function smooth(values, factor) {
    if (!factor) {
      return values;
    }
    const out = new Array(values.length);
    let last = null;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === null || v === undefined) {
        out[i] = null;
        continue;
      }
      last = last === null ? v : last * factor + v * (1 - factor);
      out[i] = last;
    }
    return out;
  }

  function counted(values) {
    let n = 0;
    for (let i = 0; i < values.length; i++) {
      if (values[i] !== null && values[i] !== undefined) {
        n++;
      }
    }
    return n;
  }

  function width(container) {
    return Math.max(280, Math.floor(container.clientWidth || container.getBoundingClientRect().width || 600));
  }

  function draw(container, data, options) {
    const opts = options || {};
    const previous = charts.get(container);
    if (previous) {
      previous.observer.disconnect();
      previous.chart.destroy();
    }
    container.textContent = '';
    const series = data.series || [];
    const height = opts.height || 320;
    const plot = new uPlot({
      width: width(container),
      height: height,
      scales: { x: { time: !!data.time } },
      axes: [
        { label: opts.xLabel || (data.time ? '' : 'step') },
        { label: opts.yLabel || '', size: 70 }
      ],
      series: [{ label: opts.xLabel || (data.time ? 'day' : 'step') }].concat(series.map((s, i) => ({
        label: s.name,
        stroke: COLORS[i % COLORS.length],
        width: 1.5,
        spanGaps: true,
        points: { show: data.x.length <= 60 }
      }))),
      cursor: { drag: { x: true, y: false } },
      legend: { live: true }
    }, [data.x].concat(series.map(s => smooth(s.values, opts.smoothing))), container);
    let drawnWidth = width(container);
    const observer = new ResizeObserver(() => {
      const now = width(container);
      if (now !== drawnWidth) {
        drawnWidth = now;
        plot.setSize({ width: now, height: height });
      }
    });
    observer.observe(container);
    charts.set(container, { chart: plot, observer: observer });
    container.dataset.points = String(series.length ? counted(series[0].values) : 0);
    container.dataset.series = series.map(s => s.name).join(',');
    container.dataset.rows = String(data.x.length);
    container.dataset.drawnAt = String(Math.round(performance.now()));
    container.removeAttribute('aria-busy');
    return plot;
  }

  function load(container, url, options) {
    container.setAttribute('aria-busy', 'true');
    return fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(response => response.json().then(body => {
        if (!response.ok) {
          throw new Error(body.error || ('HTTP ' + response.status));
        }
        return body;
      }))
      .then(data => {
        draw(container, data, options);
        return data;
      });
  }

  window.FulcrumCharts = { draw: draw, load: load, smooth: smooth };

  /* The run page: the chosen metrics' history, fetched again when the choice changes, redrawn when smoothing does. */
  function runPage(picker) {
    const container = document.getElementById('run-chart');
    const status = document.getElementById('chart-status');
    const smoothing = document.getElementById('smoothing');
    const smoothingValue = document.getElementById('smoothing-value');
    let data = null;
    let asked = 0;

    function chosen() {
      return Array.from(picker.querySelectorAll('input[name=metric]:checked')).map(box => box.value);
    }

    function redraw() {
      if (data) {
        draw(container, data, { xLabel: '_step', smoothing: Number(smoothing.value) });
      }
    }

    function fetchChosen() {
      const metrics = chosen();
      const url = new URL(window.location.href);
      if (metrics.length) {
        url.searchParams.set('metrics', metrics.join(','));
      } else {
        url.searchParams.delete('metrics');
      }
      window.history.replaceState(null, '', url);
      const ask = ++asked;
      const started = performance.now();
      status.textContent = metrics.length ? 'Loading ' + metrics.join(', ') + '…' : 'Choose a metric to draw.';
      if (!metrics.length) {
        data = { x: [], series: [] };
        redraw();
        return;
      }
      const source = picker.dataset.history + '?keys=' + metrics.map(encodeURIComponent).join(',');
      fetch(source, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
        .then(response => response.json().then(body => {
          if (!response.ok) {
            throw new Error(body.error || ('HTTP ' + response.status));
          }
          return body;
        }))
        .then(body => {
          if (ask !== asked) {
            return;
          }
          data = body;
          redraw();
          status.textContent = body.rows.toLocaleString('en') + ' rows of ' + metrics.join(', ') + ' drawn in ' +
            Math.round(performance.now() - started) + ' ms.';
        })
        .catch(error => {
          if (ask === asked) {
            status.textContent = 'Could not load the history: ' + error.message;
            container.removeAttribute('aria-busy');
          }
        });
    }

    picker.addEventListener('change', event => {
      if (event.target.name === 'metric') {
        fetchChosen();
      }
    });
    picker.addEventListener('submit', event => event.preventDefault());
    smoothing.addEventListener('input', () => {
      smoothingValue.textContent = Number(smoothing.value).toFixed(2);
      redraw();
    });
    fetchChosen();
  }

  function start() {
    document.querySelectorAll('[data-chart]').forEach(container => {
      draw(container, JSON.parse(container.dataset.chart), { yLabel: container.dataset.yLabel });
    });
    const picker = document.getElementById('metric-picker');
    if (picker) {
      runPage(picker);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
