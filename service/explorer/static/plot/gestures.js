// Zoom with the wheel (around the cursor) or a pinch (around the fingers), pan by dragging (in
// 3-D: rotate; shift-drag or two fingers pan), click or tap to choose, double-click to fit.

const CLICK_SLOP = 4;

/** Wire the canvas of `plot` to its view, its hover card and its pick callback. */
export function listenToGestures(plot) {
  const canvas = plot.canvas;
  let drag = null;
  // The pointers down on the canvas (a mouse, or each finger), and the pinch two of them make.
  const down = new Map();
  let pinch = null;
  const local = (event) => {
    const box = canvas.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top];
  };
  const moved = () => {
    plot.fitted = false;
    plot.changedView();
  };
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const [sx, sy] = local(event);
    plot.view.zoom(Math.exp(-event.deltaY * 0.0015), sx, sy);
    moved();
  }, { passive: false });
  canvas.addEventListener("pointerdown", (event) => {
    canvas.setPointerCapture(event.pointerId);
    const [sx, sy] = local(event);
    down.set(event.pointerId, [sx, sy]);
    if (down.size === 2) {
      drag = null;
      pinch = pinchOf(down);
      return;
    }
    drag = { sx, sy, lastX: sx, lastY: sy, moved: false };
  });
  canvas.addEventListener("pointermove", (event) => {
    const [sx, sy] = local(event);
    if (down.has(event.pointerId)) down.set(event.pointerId, [sx, sy]);
    if (pinch && down.size === 2) {
      const next = pinchOf(down);
      plot.view.pan(next.x - pinch.x, next.y - pinch.y);
      plot.view.zoom(next.distance / pinch.distance, next.x, next.y);
      pinch = next;
      moved();
      return;
    }
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
          moved();
        }
        return;
      }
    }
    plot.hover(plot.hit(sx, sy), sx, sy);
  });
  const lift = (event) => {
    down.delete(event.pointerId);
    // A pinch ends with its first finger up; the other finger does not choose a word.
    if (pinch) {
      pinch = null;
      drag = null;
    }
  };
  canvas.addEventListener("pointerup", (event) => {
    const [sx, sy] = local(event);
    const clicked = drag && !drag.moved;
    drag = null;
    lift(event);
    canvas.classList.remove("dragging");
    if (clicked) {
      const hit = plot.hit(sx, sy);
      if (hit) plot.onPick(hit);
    }
  });
  canvas.addEventListener("pointercancel", (event) => {
    drag = null;
    lift(event);
    canvas.classList.remove("dragging");
  });
  canvas.addEventListener("pointerleave", () => plot.hover(null, 0, 0));
  canvas.addEventListener("dblclick", () => plot.fit());
}

// The middle of two pointers and the distance between them (at least a pixel).
function pinchOf(down) {
  const [[ax, ay], [bx, by]] = down.values();
  return { x: (ax + bx) / 2, y: (ay + by) / 2, distance: Math.max(1, Math.hypot(bx - ax, by - ay)) };
}
