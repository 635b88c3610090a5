/**
 * Just enough of a classic-BPF assembler for a seccomp filter: load a word of `struct seccomp_data`,
 * compare it, return a verdict. Jumps name labels; `assemble` turns them into the 8-bit forward
 * offsets the kernel wants and lays out `struct sock_filter` (u16 code, u8 jt, u8 jf, u32 k).
 */
export type BpfInstruction =
  | { op: 'load'; offset: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; onTrue: string; onFalse?: string }
  | { op: 'ret'; k: number }
  | { op: 'label'; name: string };

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_K = { jeq: 0x15, jge: 0x35, jset: 0x45 } as const;
const BPF_RET_K = 0x06;

export function assemble(program: BpfInstruction[]): Buffer {
  const labels = new Map<string, number>();
  const code: Exclude<BpfInstruction, { op: 'label' }>[] = [];
  for (const instruction of program) {
    if (instruction.op !== 'label') code.push(instruction);
    else if (labels.has(instruction.name)) throw new Error(`label ${instruction.name} defined twice`);
    else labels.set(instruction.name, code.length);
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((instruction, pc) => {
    const at = pc * 8;
    if (instruction.op === 'load') {
      out.writeUInt16LE(BPF_LD_W_ABS, at);
      out.writeUInt32LE(instruction.offset, at + 4);
    } else if (instruction.op === 'ret') {
      out.writeUInt16LE(BPF_RET_K, at);
      out.writeUInt32LE(instruction.k >>> 0, at + 4);
    } else {
      // A missing `onFalse` falls through to the next instruction.
      const jump = (label: string | undefined): number => {
        if (label === undefined) return 0;
        const target = labels.get(label);
        if (target === undefined) throw new Error(`unknown label ${label}`);
        const offset = target - pc - 1;
        if (offset < 0 || offset > 255) throw new Error(`jump to ${label} out of range (${offset})`);
        return offset;
      };
      out.writeUInt16LE(BPF_JMP_K[instruction.op], at);
      out.writeUInt8(jump(instruction.onTrue), at + 2);
      out.writeUInt8(jump(instruction.onFalse), at + 3);
      out.writeUInt32LE(instruction.k >>> 0, at + 4);
    }
  });
  return out;
}
