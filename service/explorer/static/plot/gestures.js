// Zoom with the wheel (around the cursor), pan by dragging (in 3-D: rotate; shift-drag pans),
// click to choose, double-click to fit.

const CLICK_SLOP = 4;

/** Wire the canvas of `plot` to its view, its hover card and its pick callback. */
export function listenToGestures(plot) {
  const canvas = plot.canvas;
  let drag = null;
  const local = (event) => {
    const box = canvas.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top];
  };
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const [sx, sy] = local(event);
    plot.view.zoom(Math.exp(-event.deltaY * 0.0015), sx, sy);
    plot.fitted = false;
    plot.changedView();
  }, { passive: false });
  canvas.addEventListener("pointerdown", (event) => {
    canvas.setPointerCapture(event.pointerId);
    const [sx, sy] = local(event);
    drag = { sx, sy, lastX: sx, lastY: sy, moved: false };
  });
  canvas.addEventListener("pointermove", (event) => {
    const [sx, sy] = local(event);
    if (drag) {
      drag.moved ||= Math.hypot(sx - drag.sx, sy - drag.sy) > CLICK_SLOP;
      if (drag.moved) {
        const [dx, dy] = [sx - drag.lastX, sy - drag.lastY];
        [drag.lastX, drag.lastY] = [sx, sy];
        canvas.classList.add("dragging");
        if (plot.dims === 3 && !event.shiftKey) {
          plot.turn(dx, dy);
        } else {
          plot.view.pan(dx, dy);
          plot.fitted = false;
          plot.changedView();
        }
        return;
      }
    }
    plot.hover(plot.hit(sx, sy), sx, sy);
  });
  canvas.addEventListener("pointerup", (event) => {
    const [sx, sy] = local(event);
    const clicked = drag && !drag.moved;
    drag = null;
    canvas.classList.remove("dragging");
    if (clicked) {
      const hit = plot.hit(sx, sy);
      if (hit) plot.onPick(hit);
    }
  });
  canvas.addEventListener("pointerleave", () => plot.hover(null, 0, 0));
  canvas.addEventListener("dblclick", () => plot.fit());
}
