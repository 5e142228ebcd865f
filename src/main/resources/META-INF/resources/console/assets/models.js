// The models table's pulls: each progress bar follows its model's pull (GET .../pull.json, the API's `pull` object)
// every second, with the speed and the time left, until the pull is ready or failed.
(function () {
  'use strict';
  var POLL_MS = 1000;

  function bytes(n) {
    var units = ['B', 'kB', 'MB', 'GB', 'TB'];
    var i = 0;
    while (n >= 1000 && i < units.length - 1) {
      n /= 1000;
      i++;
    }
    return (i === 0 ? String(Math.round(n)) : n.toFixed(1)) + ' ' + units[i];
  }

  function duration(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    if (seconds >= 3600) {
      return Math.floor(seconds / 3600) + ' h ' + Math.floor((seconds % 3600) / 60) + ' min';
    }
    if (seconds >= 60) {
      return Math.floor(seconds / 60) + ' min ' + (seconds % 60) + ' s';
    }
    return seconds + ' s';
  }

  function describe(pull) {
    if (pull.state === 'failed') {
      return 'failed: ' + (pull.error || '');
    }
    if (pull.state === 'ready') {
      return 'ready';
    }
    var text = pull.state;
    if (pull.total_bytes) {
      text += ' ' + Math.floor(pull.completed_bytes * 100 / pull.total_bytes) + ' % · ' + bytes(pull.completed_bytes) +
        ' of ' + bytes(pull.total_bytes);
      if (pull.bytes_per_second && pull.bytes_per_second >= 1) {
        text += ' · ' + bytes(pull.bytes_per_second) + '/s · ' +
          duration((pull.total_bytes - pull.completed_bytes) / pull.bytes_per_second) + ' left';
      }
    }
    return text;
  }

  function follow(box) {
    var bar = box.querySelector('progress');
    var status = box.querySelector('.pull-status');
    function poll() {
      fetch(box.dataset.pull, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
        .then(function (response) {
          if (!response.ok) {
            throw new Error('pull: ' + response.status);
          }
          return response.json();
        }).then(function (answer) {
          var pull = answer.pull;
          if (!pull) {
            return;
          }
          box.dataset.state = pull.state;
          if (pull.total_bytes) {
            bar.max = pull.total_bytes;
            bar.value = pull.completed_bytes;
            bar.textContent = describe(pull);
          }
          status.textContent = describe(pull);
          if (pull.state === 'ready') {
            bar.value = bar.max;
            if (answer.gguf_path) {
              status.textContent = 'ready: ' + answer.gguf_path;
            }
          } else if (pull.state !== 'failed') {
            setTimeout(poll, POLL_MS);
          }
        }).catch(function () {
          status.textContent = 'Lost contact with the server; trying again.';
          setTimeout(poll, POLL_MS * 3);
        });
    }
    if (box.dataset.state !== 'failed') {
      poll();
    }
  }

  document.querySelectorAll('.pull[data-pull]').forEach(follow);
}());
