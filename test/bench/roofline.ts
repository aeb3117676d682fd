// The machine's roofs, measured by native/build/lf_roofline (see native/tools/lf_roofline.cpp).
import { execFileSync } from 'node:child_process';
import { toolPath } from './engines';

export interface Roofline {
  threads: number;
  /** GB/s per CPU-second of each thread: what the cores read while they run (the roof). */
  mem_read_gbs: number;
  /** GB/s per wall second in this run (lower when other processes share the cores). */
  mem_read_gbs_wall: number;
  mem_read_gbs_1thread: number;
  int8_isa: string;
  int8_gops: number;
  int8_gops_wall: number;
  fp32_isa: string;
  fp32_gflops: number;
  fp32_gflops_wall: number;
}

export function measureRoofline(threads: number, quick: boolean): Roofline {
  const args = [
    '--threads',
    String(threads),
    '--mb',
    quick ? '512' : '1024',
    '--ms',
    quick ? '150' : '300',
    '--reps',
    '3',
  ];
  const out = execFileSync(toolPath('lf_roofline'), args, { encoding: 'utf8' });
  return JSON.parse(out) as Roofline;
}
