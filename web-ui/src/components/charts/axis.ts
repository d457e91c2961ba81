"use client";
// Shared geometry for the SVG charts. The viewBox is the chart's measured width in CSS
// pixels, so labels keep their size on a phone and on a wide screen alike.
import { useEffect, useRef, useState, type RefObject } from "react";

export const MARGIN = { top: 12, right: 12, bottom: 30, left: 40 };

export interface Frame {
  WIDTH: number;
  HEIGHT: number;
  PLOT_W: number;
  PLOT_H: number;
}

/** The drawing area of a chart `width` pixels wide (its height follows, within bounds). */
export function frame(width: number): Frame {
  const WIDTH = Math.max(240, Math.round(width));
  const HEIGHT = Math.round(Math.min(320, Math.max(180, WIDTH * 0.4)));
  return {
    WIDTH,
    HEIGHT,
    PLOT_W: WIDTH - MARGIN.left - MARGIN.right,
    PLOT_H: HEIGHT - MARGIN.top - MARGIN.bottom,
  };
}

/** A ref for the chart's box and the frame of its current width. */
export function useFrame(): [RefObject<HTMLDivElement | null>, Frame] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(640);
  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(entry.contentRect.width);
    });
    observer.observe(box);
    return () => observer.disconnect();
  }, []);
  return [ref, frame(width)];
}

/** About `count` round tick values from 0 to `max`. */
export function ticks(max: number, count = 4): number[] {
  if (max <= 0) return [0];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const values: number[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) values.push(Number(v.toPrecision(6)));
  return values;
}
