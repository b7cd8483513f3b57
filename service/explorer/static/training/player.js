// Playback over a table's checkpoints: Train plays them in order, with frames interpolated
// between two checkpoints; Pause stops; the slider goes to any checkpoint itself.
//
// A position is a number of checkpoints: 3 is checkpoint 3, 3.25 a quarter of the way from
// checkpoint 3 to checkpoint 4 (an interpolated frame, not a real version of the rows).

// Time from one checkpoint to the next while playing.
export const STEP_MS = 600;

export class Player {
  constructor({ slider, train, pause, onFrame }) {
    this.slider = slider;
    this.trainButton = train;
    this.pauseButton = pause;
    this.onFrame = onFrame;
    this.count = 0;
    this.position = 0;
    this.playing = false;
    this.interpolated = 0;
    train.addEventListener("click", () => this.play());
    pause.addEventListener("click", () => this.pause());
    slider.addEventListener("input", () => this.seek(Number(slider.value)));
  }

  /** A new set of `count` checkpoints, shown at `position`. */
  load(count, position = count - 1) {
    this.pause();
    this.count = count;
    this.slider.max = String(Math.max(count - 1, 0));
    this.trainButton.disabled = count < 2;
    this.seek(position);
  }

  /** Play from checkpoint 0 (or from where a pause left it) to the last checkpoint. */
  play() {
    if (this.count < 2 || this.playing) return;
    if (this.position >= this.count - 1) this.position = 0;
    this.playing = true;
    this.interpolated = 0;
    this.pauseButton.disabled = false;
    this.trainButton.disabled = true;
    this.started = performance.now() - this.position * STEP_MS;
    this.show();
    requestAnimationFrame((now) => this.tick(now));
  }

  pause() {
    this.playing = false;
    this.pauseButton.disabled = true;
    this.trainButton.disabled = this.count < 2;
    document.body.dataset.playing = "false";
  }

  /** Show one checkpoint itself (pausing any playback). */
  seek(checkpoint) {
    this.pause();
    this.position = Math.min(Math.max(0, Math.round(checkpoint)), Math.max(this.count - 1, 0));
    this.show();
  }

  tick(now) {
    if (!this.playing) return;
    const last = this.count - 1;
    // A frame's timestamp may precede the moment play() was clicked.
    this.position = Math.min(Math.max(0, (now - this.started) / STEP_MS), last);
    if (!Number.isInteger(this.position)) this.interpolated += 1;
    this.show();
    if (this.position >= last) this.pause();
    else requestAnimationFrame((next) => this.tick(next));
  }

  show() {
    const body = document.body.dataset;
    this.slider.value = String(Math.floor(this.position));
    body.playing = String(this.playing);
    body.position = String(this.position);
    body.frame = Number.isInteger(this.position) ? "checkpoint" : "interpolated";
    body.interpolatedFrames = String(this.interpolated);
    this.onFrame(this.position);
  }
}
