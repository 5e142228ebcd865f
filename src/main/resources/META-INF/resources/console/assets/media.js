/*
 * Fulcrum console, a run's media: each image figure carries its frames (data-frames: [{step, url, caption}], in step
 * order) and a range input; moving it shows the frame of that position (image, step, caption).
 */
(function () {
  'use strict';

  function wire(figure) {
    const slider = figure.querySelector('.media-slider');
    if (!slider) {
      return;
    }
    const frames = JSON.parse(figure.getAttribute('data-frames'));
    const img = figure.querySelector('img');
    const step = figure.querySelector('.media-step');
    const caption = figure.querySelector('.media-caption');
    const key = img.alt.replace(/ at step \d+$/, '');
    slider.addEventListener('input', function () {
      const frame = frames[Number(slider.value)];
      img.src = frame.url;
      img.alt = key + ' at step ' + frame.step;
      step.textContent = String(frame.step);
      caption.textContent = frame.caption;
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    document.querySelectorAll('figure[data-frames]').forEach(wire);
  });
})();
