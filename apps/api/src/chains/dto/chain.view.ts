/** The Chain resource on the wire (spec §2). */
export interface ChainView {
  id: string;
  name: string;
  lastHash: string;
  lastPosition: number;
  eventCount: number;
  createdAt: string;
}
