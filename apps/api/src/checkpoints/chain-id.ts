/** A chain id as we issue them; anything else is answered like an unknown chain (404). */
export const CHAIN_ID = /^chn_[0-9A-HJKMNP-TV-Z]{26}$/;
