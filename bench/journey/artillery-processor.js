// Helpers of bench/journey/artillery.yml (Artillery 2.x loads this in each worker thread).
//
// JOURNEY_LOOP_SECONDS=D: closed loop: every VU repeats the journey until D seconds after the
// first VU of this worker started (startClock), then ends. Unset or 0: each VU runs the
// journey once (the fixed-rate run: one VU per journey).
'use strict';

const loopMs = Number(process.env.JOURNEY_LOOP_SECONDS || 0) * 1000;
let deadline = null;

// beforeScenario hook: the first VU starts the clock.
function startClock(context, events, next) {
  if (deadline === null) deadline = Date.now() + loopMs;
  return next();
}

// whileTrue of the journey's loop; called after each pass.
function again(context, next) {
  return next(loopMs > 0 && Date.now() < deadline);
}

module.exports = { startClock, again };
